"""benchfoundry: build, curate and evaluate multiple-choice vision-language benchmarks."""
