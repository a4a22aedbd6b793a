from django.db import migrations, models

# One row per statement that touched a scope's turn vectors, whatever wrote them (the indexer's COPY and
# upserts, deletes on forgetting, erasure, a scope's deletion, a model's switch): retrieval/matrix.py.
TRIGGER = """
CREATE FUNCTION retrieval_vector_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        INSERT INTO retrieval_vectorchange (scope_id) SELECT DISTINCT scope_id FROM gone WHERE target_type = 'doc_turn';
    ELSE
        INSERT INTO retrieval_vectorchange (scope_id) SELECT DISTINCT scope_id FROM came WHERE target_type = 'doc_turn';
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER retrieval_embedding_inserted AFTER INSERT ON retrieval_embedding
    REFERENCING NEW TABLE AS came FOR EACH STATEMENT EXECUTE FUNCTION retrieval_vector_changed();
CREATE TRIGGER retrieval_embedding_updated AFTER UPDATE ON retrieval_embedding
    REFERENCING NEW TABLE AS came FOR EACH STATEMENT EXECUTE FUNCTION retrieval_vector_changed();
CREATE TRIGGER retrieval_embedding_deleted AFTER DELETE ON retrieval_embedding
    REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION retrieval_vector_changed();
"""
UNDO = """
DROP TRIGGER IF EXISTS retrieval_embedding_inserted ON retrieval_embedding;
DROP TRIGGER IF EXISTS retrieval_embedding_updated ON retrieval_embedding;
DROP TRIGGER IF EXISTS retrieval_embedding_deleted ON retrieval_embedding;
DROP FUNCTION IF EXISTS retrieval_vector_changed();
"""


class Migration(migrations.Migration):
    """A log of changes to each scope's turn vectors, for the processes that hold them in memory."""

    dependencies = [
        ("memories", "0015_factsupport_valid_from"),
    ]

    operations = [
        migrations.CreateModel(
            name="VectorChange",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("scope_id", models.BigIntegerField()),
            ],
            options={
                "db_table": "retrieval_vectorchange",
                "indexes": [models.Index(fields=["scope_id", "id"], name="retr_vectorchange_scope_idx")],
            },
        ),
        migrations.RunSQL(TRIGGER, UNDO),
    ]
