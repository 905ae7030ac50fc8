"""Prompt templates (`*.j2`), shipped as package data and found with `importlib.resources`."""
