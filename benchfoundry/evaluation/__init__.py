"""Evaluating models on curated datasets: the datasets it reads and the statistics it reports."""
