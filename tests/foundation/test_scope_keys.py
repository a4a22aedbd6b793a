"""The schema is ready for distribution by scope (docs/ARCHITECTURE.md, "Past one database"): every
large table carries `scope_id`, and each of its unique keys includes it, so rows of one scope can
live together on one node (Citus' rule for a distributed table: every unique constraint contains
the distribution column). Read from the migrated test database's catalog, so a model and its
migrations must agree. The primary keys (Django's `id`) are the exception this test allows; the
architecture says what Citus needs there."""

import pytest
from django.db import connection

pytestmark = pytest.mark.django_db

# The memory and the index of a scope: they grow with what a team says.
LARGE_TABLES = {
    "memories_session", "memories_turn", "memories_episode", "memories_entity", "memories_entityalias", "memories_fact",
    "memories_factsupport", "memories_mention", "memories_entitymerge", "memories_mergeproposal",
    "retrieval_embedding", "retrieval_searchdocument", "retrieval_posting", "retrieval_postingpack", "retrieval_postinggone",
    "retrieval_termstat", "retrieval_corpusstat", "retrieval_vectorchange",
    "retrieval_indexstate",
}
# Tables with a scope_id that stay on the coordinator (reference or local tables): the audit and
# call logs, which scopes a token may use, and the erasures' tombstones (few, and they outlive a
# deleted scope: their scope_id may be NULL). A new table with a scope_id must be named in one of
# the two sets.
COORDINATOR_TABLES = {"memories_auditevent", "accounts_apicall", "accounts_apitoken_scopes", "memories_tombstone"}


def _tables_with_scope() -> set[str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT table_name FROM information_schema.columns WHERE table_schema = current_schema() AND column_name = 'scope_id'"
        )
        return {row[0] for row in cursor.fetchall()}


def _unique_keys(table: str) -> list[tuple[str, list[str], str]]:
    """Each unique index of `table` but the primary key: its name, its columns, and the text of
    its expressions (a key over LEAST/GREATEST of two columns)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT i.relname, array_remove(array_agg(a.attname ORDER BY k.n), NULL),"
            "       coalesce(pg_get_expr(x.indexprs, x.indrelid), '')"
            " FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid"
            " CROSS JOIN LATERAL unnest(x.indkey) WITH ORDINALITY AS k(attnum, n)"
            " LEFT JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.attnum AND k.attnum > 0"
            " WHERE x.indrelid = %s::regclass AND x.indisunique AND NOT x.indisprimary"
            " GROUP BY i.relname, x.indexprs, x.indrelid",
            [table],
        )
        return cursor.fetchall()


def test_every_table_with_a_scope_is_either_large_or_stays_on_the_coordinator():
    assert _tables_with_scope() == LARGE_TABLES | COORDINATOR_TABLES


@pytest.mark.parametrize("table", sorted(LARGE_TABLES))
def test_a_large_table_carries_scope_id_in_each_of_its_unique_keys(table):
    assert table in _tables_with_scope(), f"{table} has no scope_id column"
    missing = [(name, columns, expressions) for name, columns, expressions in _unique_keys(table)
               if "scope_id" not in columns and "scope_id" not in expressions]
    assert missing == [], f"unique keys of {table} without scope_id: {missing}"


def test_the_check_sees_a_unique_key_without_scope_id():
    """The catalog query finds keys: a table known to have unique keys with scope_id lists them,
    and one made here without it is caught (inside the test's transaction, rolled back)."""
    keys = {name: columns for name, columns, _ in _unique_keys("memories_turn")}
    assert keys["memories_turn_unique_external_id_in_scope"] == ["scope_id", "session_id", "external_id"]
    with connection.cursor() as cursor:
        cursor.execute("CREATE UNIQUE INDEX scope_keys_probe ON memories_turn (session_id, position)")
    assert ("scope_keys_probe", ["session_id", "position"], "") in _unique_keys("memories_turn")
