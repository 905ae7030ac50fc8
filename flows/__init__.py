"""Prefect flows: wiring of stages, parameters, retries and artifacts only."""
