"""The item explorer: a static site (HTML, CSS, JavaScript and data files; no server, opens from
`file://`) over a release, or over an evaluation with its release. `site` writes the one data
shape the front end (`static/`) reads; `release_data` gathers a release's items (with the run's
evidence, review history and build judgements when the run is at hand) and `evaluation_data`
adds an evaluation's answers and item analysis. `publish` and `evaluate` call these with one
line each; `benchfoundry explore` writes one on demand. See docs/explore.md."""
