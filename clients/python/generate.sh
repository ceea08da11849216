#!/usr/bin/env bash
# Regenerates shardtrain/shardtrain_pb2.py (the API's message classes) from the proto the node
# serves. Needs protoc 3.20 or later (its output runs on the protobuf 3.20+/4.x Python runtime,
# Debian 12's python3-protobuf included): $PROTOC, else protoc on the PATH, else the protoc 3.21.9
# that the akka-grpc Maven plugin downloads while building module actors. The service stub is not
# generated: shardtrain/client.py calls the methods over grpc.Channel itself.
#
# Made the committed file with: PROTOC=/tmp/protocjar.webcache/com/google/protobuf/protoc/3.21.9/protoc-3.21.9-linux-x86_64.exe clients/python/generate.sh
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
proto_dir="$here/../../actors/src/main/protobuf"

protoc="${PROTOC:-}"
if [ -z "$protoc" ]; then
  if command -v protoc >/dev/null; then
    protoc=protoc
  else
    protoc="$(find /tmp/protocjar.webcache "$HOME/.m2/repository/com/google/protobuf/protoc" \
      -name 'protoc-3.2[0-9]*-linux-x86_64.exe' 2>/dev/null | sort | tail -1 || true)"
  fi
fi
if [ -z "$protoc" ]; then
  echo "generate.sh: no protoc found; set PROTOC, install protobuf-compiler (3.20+), or build module actors once (mvn -pl actors -am compile) so the akka-grpc plugin downloads one" >&2
  exit 2
fi
if [ ! -x "$protoc" ] && ! command -v "$protoc" >/dev/null; then
  # protoc-jar's cache keeps the binary without the execute bit.
  copy="$(mktemp)"
  trap 'rm -f "$copy"' EXIT
  cp "$protoc" "$copy" && chmod +x "$copy"
  protoc="$copy"
fi
version="$("$protoc" --version | awk '{print $2}')"
case "$version" in
  3.[0-9].*|3.1[0-9].*) echo "generate.sh: $protoc is protoc $version; the Python runtime needs code from protoc 3.20 or later" >&2; exit 2 ;;
esac
# OUT: another directory to write to (PythonClientTest compares that with the committed file).
out="${OUT:-$here/shardtrain}"
mkdir -p "$out"
"$protoc" -I "$proto_dir" --python_out="$out" "$proto_dir/shardtrain.proto"
echo "generated $out/shardtrain_pb2.py with protoc $version"
