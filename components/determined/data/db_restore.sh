# Loads the dump $DUMP into the database (PG* variables; db_connect.sh, run first, reads the password), in one
# transaction: either the whole dump is in, or nothing changed. $MODE replace: first drops
# every table, view, sequence, function and type of schema public (the dump's objects and any
# a newer master added). $MODE into-empty: refuses a database that holds any table. Both wait
# for the master's sessions to end first. POSIX sh (the postgres image's dash).
set -eu
umask 077
tmp="${TMPDIR:-/tmp}"
[ -f "$DUMP" ] || { echo "no dump at $DUMP" >&2; exit 1; }

query() {
  psql --no-psqlrc --tuples-only --no-align --set=ON_ERROR_STOP=1 --command="$1"
}

waited=0
while :; do
  others=$(query "SELECT count(*) FROM pg_catalog.pg_stat_activity WHERE datname = current_database() AND usename = current_user AND pid <> pg_backend_pid()")
  [ "$others" = 0 ] && break
  if [ "$waited" -ge "$WAIT_SECONDS" ]; then
    echo "refusing: $others other session(s) of $PGUSER still use $PGDATABASE (is the master running?)" >&2
    exit 1
  fi
  sleep 10
  waited=$((waited + 10))
done

if [ "$MODE" = into-empty ]; then
  tables=$(query "SELECT count(*) FROM pg_catalog.pg_tables WHERE schemaname = 'public'")
  if [ "$tables" != 0 ]; then
    echo "refusing: database $PGDATABASE already holds $tables tables; data is only copied into an empty database (never over newer records)" >&2
    exit 1
  fi
fi

# The dump's table of contents without what the database has already and only its owner may
# change (schema public, the plpgsql extension and their comments).
pg_restore --list "$DUMP" > "$tmp/toc"
grep -v -E '^[0-9]+; [0-9]+ [0-9]+ (SCHEMA - public|COMMENT - SCHEMA public|EXTENSION - plpgsql|COMMENT - EXTENSION plpgsql)( |$)' "$tmp/toc" > "$tmp/restore.list" || true
if ! grep -q -E '^[0-9]+; [0-9]+ [0-9]+ TABLE ' "$tmp/restore.list"; then
  echo "refusing: $DUMP holds no table" >&2
  exit 1
fi

rm -f "$tmp/restore.failed"
{
  echo 'BEGIN;'
  echo 'SET client_min_messages = warning;'
  if [ "$MODE" = replace ]; then
    cat <<'SQL'
DO $$
DECLARE
  statements text[];
  statement text;
BEGIN
  -- Each list is made before its drops: a CASCADE may drop later entries (IF EXISTS).
  -- Sequences last: an identity column's sequence cannot be dropped on its own, it goes
  -- with its table.
  SELECT array_agg(format('DROP %s IF EXISTS %s CASCADE',
           CASE c.relkind WHEN 'v' THEN 'VIEW' WHEN 'm' THEN 'MATERIALIZED VIEW'
                          WHEN 'S' THEN 'SEQUENCE' WHEN 'f' THEN 'FOREIGN TABLE' ELSE 'TABLE' END,
           c.oid::regclass) ORDER BY c.relkind = 'S')
    INTO statements
    FROM pg_catalog.pg_class c
   WHERE c.relnamespace = 'public'::regnamespace
     AND c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f')
     AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_depend d WHERE d.classid = 'pg_catalog.pg_class'::regclass
                     AND d.objid = c.oid AND d.deptype = 'e');
  FOREACH statement IN ARRAY coalesce(statements, '{}') LOOP EXECUTE statement; END LOOP;
  SELECT array_agg(format('DROP %s IF EXISTS %s CASCADE',
           CASE p.prokind WHEN 'a' THEN 'AGGREGATE' WHEN 'p' THEN 'PROCEDURE' ELSE 'FUNCTION' END,
           p.oid::regprocedure))
    INTO statements
    FROM pg_catalog.pg_proc p
   WHERE p.pronamespace = 'public'::regnamespace
     AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_depend d WHERE d.classid = 'pg_catalog.pg_proc'::regclass
                     AND d.objid = p.oid AND d.deptype = 'e');
  FOREACH statement IN ARRAY coalesce(statements, '{}') LOOP EXECUTE statement; END LOOP;
  SELECT array_agg(format('DROP %s IF EXISTS %s CASCADE',
           CASE t.typtype WHEN 'd' THEN 'DOMAIN' ELSE 'TYPE' END, t.oid::regtype))
    INTO statements
    FROM pg_catalog.pg_type t
   WHERE t.typnamespace = 'public'::regnamespace
     AND (t.typtype IN ('d', 'e', 'r')
          OR (t.typtype = 'c' AND (SELECT relkind FROM pg_catalog.pg_class WHERE oid = t.typrelid) = 'c'))
     AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_depend d WHERE d.classid = 'pg_catalog.pg_type'::regclass
                     AND d.objid = t.oid AND d.deptype = 'e');
  FOREACH statement IN ARRAY coalesce(statements, '{}') LOOP EXECUTE statement; END LOOP;
END
$$;
SQL
  fi
  if pg_restore --no-owner --no-privileges --use-list="$tmp/restore.list" --file=- "$DUMP"; then
    echo 'COMMIT;'
  else
    : > "$tmp/restore.failed"
  fi
} | psql --no-psqlrc --quiet --set=ON_ERROR_STOP=1 --output=/dev/null
if [ -e "$tmp/restore.failed" ]; then
  echo "pg_restore could not read $DUMP: nothing was changed" >&2
  exit 1
fi
echo "restored $(basename "$DUMP") into database $PGDATABASE"
