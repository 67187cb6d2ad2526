# Readies the PostgreSQL client tools for the script that follows it (db_dump.sh,
# db_restore.sh): the password from its Secret's file, in this shell's environment only,
# never the pod's; then waits for the server (PG* variables say where), five minutes at most.
# POSIX sh (the postgres image's dash).
set -eu
umask 077
PGPASSWORD=$(cat "${DB_CREDENTIALS_DIR:-/etc/determined-db-credentials}/postgres-password")
export PGPASSWORD
tries=0
until pg_isready --quiet; do
  tries=$((tries + 1))
  if [ "$tries" -ge 60 ]; then
    echo "the database at $PGHOST:$PGPORT does not answer" >&2
    exit 1
  fi
  sleep 5
done
