#!/usr/bin/env bash
# Makes a development CA and one key per node for shardtrain.security (docs/OPERATIONS.md,
# section 12), with the JDK's keytool:
#
#   bash scripts/make-certs.sh DIR NAME[:SAN] ...
#
# e.g. `bash scripts/make-certs.sh certs node1 node2 node3:ip:10.0.0.7,dns:gpu7`. Into DIR:
#   ca.p12          the CA's key (keep it off the nodes; it signs new node keys on a later run)
#   ca.pem          the CA's certificate, for clients that are not Java (the Python client)
#   truststore.p12  the CA's certificate: every node's and client's shardtrain.security.trust-store
#   NAME.p12        NAME's key and certificate chain, signed by the CA: that node's key-store
#   NAME.conf       NAME's shardtrain.security settings (bin/shardtrain node --security DIR/NAME.conf)
#   client.conf     a command-line client's: the trust store and the token, no key
#   token           the bearer token gRPC calls carry
#   password        the stores' password
# Every certificate names localhost and 127.0.0.1; SAN adds keytool's SAN entries (ip:..., dns:...)
# for a node that clients reach at another address. Run again with the same DIR to add nodes: the
# existing CA, password and token are kept. For development and tests: the password sits in the
# .conf files, and the CA's key is in DIR.
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 DIR NAME[:SAN] ... (e.g. $0 certs node1 node2 node3)" >&2
  exit 2
fi
command -v keytool >/dev/null || { echo "make-certs: keytool (a JDK) is needed" >&2; exit 2; }
DIR="$1"; shift
mkdir -p "$DIR"
DIR="$(cd "$DIR" && pwd)"
DAYS="${SHARDTRAIN_CERT_DAYS:-825}"
umask 077

if [ ! -f "$DIR/password" ]; then
  head -c 18 /dev/urandom | base64 | tr -d '/+=' > "$DIR/password"
fi
PW="$(cat "$DIR/password")"
if [ ! -f "$DIR/token" ]; then
  head -c 32 /dev/urandom | base64 | tr -d '/+=' > "$DIR/token"
fi

kt() { keytool "$@" -storetype PKCS12 -storepass "$PW" 2>&1 | grep -v -e '^Generating' -e '^Certificate' -e '^\s*for:' -e '^$' || true; }

if [ ! -f "$DIR/ca.p12" ]; then
  kt -genkeypair -alias ca -keyalg RSA -keysize 2048 -validity "$DAYS" -dname "CN=ShardTrain development CA" \
    -ext bc:c=ca:true -ext ku:c=keyCertSign,cRLSign -keystore "$DIR/ca.p12"
  kt -exportcert -rfc -alias ca -keystore "$DIR/ca.p12" -file "$DIR/ca.pem"
  rm -f "$DIR/truststore.p12"
  kt -importcert -noprompt -alias ca -file "$DIR/ca.pem" -keystore "$DIR/truststore.p12"
fi

conf() { # NAME WITH_KEY
  {
    echo "# shardtrain.security for $1, made by scripts/make-certs.sh (development only: it holds the password)."
    echo "shardtrain.security {"
    echo "  enabled = on"
    if [ "$2" = yes ]; then
      echo "  key-store = \"$DIR/$1.p12\""
      echo "  key-store-password = \"$PW\""
    fi
    echo "  trust-store = \"$DIR/truststore.p12\""
    echo "  trust-store-password = \"$PW\""
    echo "  token-file = \"$DIR/token\""
    echo "}"
  } > "$DIR/$1.conf"
}

for arg in "$@"; do
  name="${arg%%:*}"
  extra=""
  [ "$name" != "$arg" ] && extra=",${arg#*:}"
  case "$name" in
    ca|client|truststore|token|password|"") echo "make-certs: '$name' is a reserved name" >&2; exit 2 ;;
  esac
  rm -f "$DIR/$name.p12"
  kt -genkeypair -alias node -keyalg RSA -keysize 2048 -validity "$DAYS" -dname "CN=$name" -keystore "$DIR/$name.p12"
  keytool -certreq -alias node -keystore "$DIR/$name.p12" -storetype PKCS12 -storepass "$PW" \
    | keytool -gencert -rfc -alias ca -keystore "$DIR/ca.p12" -storetype PKCS12 -storepass "$PW" -validity "$DAYS" \
        -ext "SAN=dns:localhost,ip:127.0.0.1$extra" -ext ku:c=digitalSignature,keyEncipherment \
        -ext eku=serverAuth,clientAuth > "$DIR/$name.pem"
  # The chain: the CA first, so the signed certificate's reply links to it.
  kt -importcert -noprompt -alias ca -file "$DIR/ca.pem" -keystore "$DIR/$name.p12"
  kt -importcert -noprompt -alias node -file "$DIR/$name.pem" -keystore "$DIR/$name.p12"
  rm -f "$DIR/$name.pem"
  conf "$name" yes
  echo "make-certs: $DIR/$name.p12 and $DIR/$name.conf (CN=$name, SAN dns:localhost,ip:127.0.0.1$extra)"
done
conf client no
echo "make-certs: CA $DIR/ca.pem, trust store $DIR/truststore.p12, token $DIR/token, client settings $DIR/client.conf"
