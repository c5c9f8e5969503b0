#!/bin/sh
# One-shot (docker-compose.yml, service temporal-namespace): creates the service's namespace with a
# retention of RETENTION_DAYS days, or sets that retention on the existing one, so a changed
# RUN_HISTORY_RETENTION_DAYS applies at the next `docker compose up`. The API and the worker start
# only after this exits 0. Search attributes are registered by the worker itself at its start.
set -eu

: "${TEMPORAL_ADDRESS:?}" "${NAMESPACE:?}"
RETENTION_DAYS="${RETENTION_DAYS-}"
case "$RETENTION_DAYS" in
  '' | *[!0-9]* | 0)
    echo "RUN_HISTORY_RETENTION_DAYS must be a whole number of days (at least 1), not '$RETENTION_DAYS'" >&2
    exit 2
    ;;
esac
retention="${RETENTION_DAYS}d"

attempt=1
until health=$(temporal operator cluster health --address "$TEMPORAL_ADDRESS" 2>&1); do
  if [ "$attempt" -ge "${MAX_ATTEMPTS:-60}" ]; then
    echo "Temporal at $TEMPORAL_ADDRESS was not healthy after $attempt attempts: $health" >&2
    exit 1
  fi
  attempt=$((attempt + 1))
  sleep 2
done

# A namespace just created may be unknown to the frontend for a few seconds (its namespace cache):
# create or update until one succeeds.
attempt=1
while :; do
  if temporal operator namespace describe --namespace "$NAMESPACE" --address "$TEMPORAL_ADDRESS" >/dev/null 2>&1; then
    if out=$(temporal operator namespace update --namespace "$NAMESPACE" --retention "$retention" --address "$TEMPORAL_ADDRESS" 2>&1); then
      echo "namespace $NAMESPACE: retention $retention"
      break
    fi
  elif out=$(temporal operator namespace create --namespace "$NAMESPACE" --retention "$retention" --address "$TEMPORAL_ADDRESS" 2>&1); then
    echo "namespace $NAMESPACE created, retention $retention"
    break
  fi
  if [ "$attempt" -ge "${MAX_ATTEMPTS:-60}" ]; then
    echo "could not set namespace $NAMESPACE to retention $retention after $attempt attempts: $out" >&2
    exit 1
  fi
  attempt=$((attempt + 1))
  sleep 2
done
