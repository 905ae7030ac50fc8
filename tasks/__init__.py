"""Stage logic as plain functions over typed records, each wrapped by a thin Prefect task."""
