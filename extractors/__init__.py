"""Visual information extractors: one interface per role (OCR, segmenter, captioner, instance
describer), one module per backend, and one table of lazy factories (`benchfoundry.extractors.registry`)."""
