"""Quality control's own reading of a picture, the evidence that checks a template key: things
(colour, shape, box, area, place) and lines of text, read from the pixels by methods that none
of the readings that wrote the key uses (`reading.read_pixels`).

Independence is structural: this package imports nothing of `benchfoundry.extractors` (the
readers that write keys) and they import nothing of it, an import-linter contract in
pyproject.toml that `make test` keeps."""
