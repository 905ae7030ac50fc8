"""Great Expectations suites and the gates that run them before a dataset is published."""
