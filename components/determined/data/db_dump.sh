# Dumps the database into $WORK/$POD_NAME in pg_dump's custom format, with the UTC time it
# started in `stamp`: the next container stores it. A database without Determined's tables
# (a new install) is not dumped; `empty` says so. PG* variables say where, PGPASSWORD from
# a Secret's file, read by db_connect.sh, which runs first. POSIX sh (the postgres image's dash).
set -eu
umask 077
work="$WORK/${POD_NAME:?}"
rm -rf "$work"
mkdir -p "$work"

stamp=$(date -u +%Y%m%dT%H%M%SZ)
tables=$(psql --no-psqlrc --tuples-only --no-align --set=ON_ERROR_STOP=1 --command="SELECT count(*) FROM pg_catalog.pg_tables WHERE schemaname = 'public' AND tablename IN ('gopg_migrations', 'schema_migrations')")
if [ "$tables" = 0 ]; then
  echo "database $PGDATABASE holds no Determined tables yet (a new install): nothing to dump"
  : > "$work/empty"
  exit 0
fi
pg_dump --format=custom --no-password --file="$work/dump.partial"
mv "$work/dump.partial" "$work/dump"
printf '%s\n' "$stamp" > "$work/stamp"
echo "dumped database $PGDATABASE at $stamp: $(wc -c < "$work/dump") bytes"
