"""The answering engine shared by quality control and evaluation: prompts for multiple-choice
questions, choice extraction, CircularEval, likelihood ranking and chance baselines."""
