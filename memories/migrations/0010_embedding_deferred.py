"""Embedding.deferred, and the per-model HNSW indexes rebuilt to leave deferred vectors out.

A vector of a scope small enough to be searched exactly no longer pays for a graph insert. The
per-model indexes are created at run time (memories/services/vectors.py: ensure_model_index);
existing ones are rebuilt here with the new predicate, which approximate queries now repeat.
Rebuilding is one pass over each model's vectors (the same work as a first build)."""

import re

from django.db import migrations, models

_PREDICATE = re.compile(r"vector\((\d+)\).*WHERE \(\(model\)::text = '((?:[^']|'')*)'::text\)\s*$")


def _rebuild_hnsw(apps, schema_editor, *, deferred_out: bool) -> None:
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'retrieval_embedding'"
                       " AND indexname LIKE 'retrieval\\_emb\\_hnsw\\_%%'")
        for name, definition in cursor.fetchall():
            found = _PREDICATE.search(definition) if deferred_out else re.search(
                r"vector\((\d+)\).*WHERE \(\(\(model\)::text = '((?:[^']|'')*)'::text\) AND \(NOT deferred\)\)\s*$", definition)
            if not found:
                continue
            dim, model = int(found.group(1)), found.group(2).replace("''", "'")
            cursor.execute(f'DROP INDEX "{name}"')
            cursor.execute(
                f'CREATE INDEX "{name}" ON retrieval_embedding USING hnsw ((vec::vector({dim})) vector_cosine_ops)'
                f" WHERE model = %s{' AND NOT deferred' if deferred_out else ''}",
                [model],
            )


def forwards(apps, schema_editor):
    _rebuild_hnsw(apps, schema_editor, deferred_out=True)


def backwards(apps, schema_editor):
    _rebuild_hnsw(apps, schema_editor, deferred_out=False)


class Migration(migrations.Migration):

    dependencies = [
        ("memories", "0009_episode_consolidated_into"),
        ("retrieval", "0006_embedding_moves_out"),  # the table itself is created by retrieval's migrations
    ]

    operations = [
        migrations.AddField(
            model_name="embedding",
            name="deferred",
            field=models.BooleanField(db_default=False, default=False),
        ),
        migrations.AddIndex(
            model_name="embedding",
            index=models.Index(condition=models.Q(("deferred", True)), fields=["scope", "model"], name="retr_embedding_deferred_idx"),
        ),
        migrations.RunPython(forwards, backwards),
    ]
