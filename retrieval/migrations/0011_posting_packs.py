"""BM25's packed postings (retrieval/packs.py): a table of a large scope's lexemes' postings as
arrays, kept true by triggers (a statement deleting or updating packed postings records them gone,
whatever path it comes by: the indexer's rewrite of a window, forgetting, erasure), and the
postings' lookup index ordered by document within a lexeme, so the rows after a pack
(`document_id > max_document`) are one range read. It replaces the impact-ordered index of
migration 0010, which served the two-phase read that packs replace."""

import django.contrib.postgres.fields
import django.db.models.deletion
from django.db import migrations, models

# Migration 0010's index key, for going back.
IMPACT_KEY = (
    "((0.3::float8 + 0.9::float8 * length::float8 / (CASE collection WHEN 'turn_w1' THEN 30.0::float8"
    " WHEN 'turn_w2' THEN 45.0::float8 ELSE 12.0::float8 END)) / NULLIF(tf, 0)::float8)"
)

# Statement-level triggers with transition tables. A posting deleted or updated whose document a
# pack holds (at most its `max_document`) is recorded gone, once per (scope, collection, lexeme,
# document); the pack itself stays. Nothing happens when no pack exists.
STALE_SQL = """
CREATE FUNCTION retrieval_packs_gone() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF EXISTS (SELECT 1 FROM retrieval_postingpack) THEN
        INSERT INTO retrieval_postinggone (scope_id, collection, lexeme, document_id)
        SELECT DISTINCT g.scope_id, g.collection, g.lexeme, g.document_id FROM gone g
        JOIN retrieval_postingpack k ON k.scope_id = g.scope_id AND k.collection = g.collection AND k.lexeme = g.lexeme
        WHERE g.document_id <= k.max_document
        ON CONFLICT DO NOTHING;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER retrieval_posting_deleted AFTER DELETE ON retrieval_posting
    REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION retrieval_packs_gone();
CREATE TRIGGER retrieval_posting_updated_old AFTER UPDATE ON retrieval_posting
    REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION retrieval_packs_gone();
CREATE TRIGGER retrieval_posting_updated_new AFTER UPDATE ON retrieval_posting
    REFERENCING NEW TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION retrieval_packs_gone();
"""
STALE_REVERSE = """
DROP TRIGGER retrieval_posting_deleted ON retrieval_posting;
DROP TRIGGER retrieval_posting_updated_old ON retrieval_posting;
DROP TRIGGER retrieval_posting_updated_new ON retrieval_posting;
DROP FUNCTION retrieval_packs_gone();
"""


class Migration(migrations.Migration):

    dependencies = [
        ('memories', '0015_factsupport_valid_from'),
        ('retrieval', '0010_posting_impact_index'),
    ]

    operations = [
        migrations.CreateModel(
            name='PostingGone',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('collection', models.CharField(choices=[('fact', 'Fact'), ('episode', 'Episode'), ('turn', 'Turn'), ('turn_w1', 'Turn W1'), ('turn_w2', 'Turn W2')], max_length=16)),
                ('lexeme', models.TextField()),
                ('document_id', models.BigIntegerField()),
                ('scope', models.ForeignKey(db_constraint=False, db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='memories.scope')),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('scope', 'collection', 'lexeme', 'document_id'), name='retrieval_postinggone_unique')],
            },
        ),
        migrations.CreateModel(
            name='PostingPack',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('collection', models.CharField(choices=[('fact', 'Fact'), ('episode', 'Episode'), ('turn', 'Turn'), ('turn_w1', 'Turn W1'), ('turn_w2', 'Turn W2')], max_length=16)),
                ('lexeme', models.TextField()),
                ('postings', models.IntegerField()),
                ('max_document', models.BigIntegerField()),
                ('documents', models.BinaryField()),
                ('tfs', models.BinaryField()),
                ('lengths', models.BinaryField()),
                ('speaker_codes', models.BinaryField()),
                ('speakers', django.contrib.postgres.fields.ArrayField(base_field=models.TextField(), default=list, size=None)),
                ('built_at', models.DateTimeField(auto_now=True)),
                ('scope', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='memories.scope')),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('scope', 'collection', 'lexeme'), name='retrieval_postingpack_unique')],
            },
        ),
        # The arrays are read whole on every question: stored out of line but not compressed.
        migrations.RunSQL(
            "ALTER TABLE retrieval_postingpack ALTER COLUMN documents SET STORAGE EXTERNAL,"
            " ALTER COLUMN tfs SET STORAGE EXTERNAL, ALTER COLUMN lengths SET STORAGE EXTERNAL,"
            " ALTER COLUMN speaker_codes SET STORAGE EXTERNAL",
            reverse_sql=migrations.RunSQL.noop,
        ),
        migrations.RunSQL(STALE_SQL, reverse_sql=STALE_REVERSE),
        migrations.RunSQL(
            "CREATE INDEX retr_posting_lookup_idx ON retrieval_posting (scope_id, collection, lexeme, document_id)"
            " INCLUDE (tf, length, speaker)",
            reverse_sql="DROP INDEX retr_posting_lookup_idx",
        ),
        migrations.RunSQL(
            "DROP INDEX retr_posting_impact_idx",
            reverse_sql=f"CREATE INDEX retr_posting_impact_idx ON retrieval_posting (scope_id, collection, lexeme, {IMPACT_KEY})"
            " INCLUDE (document_id, tf, length, speaker)",
        ),
    ]
