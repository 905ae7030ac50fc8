"""Visual information extractors: one interface per role (captioner, segmenter, OCR,
instance describer), one module per backend."""
