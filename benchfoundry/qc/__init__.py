"""Quality control of candidate questions: text-only filtering, VLM consensus, hit counting,
difficulty and balanced selection (SEED-Bench, MMBench, MMStar)."""
