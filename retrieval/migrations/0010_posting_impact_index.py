"""BM25's postings read by impact: the lookup index gets a fourth key column, the posting's
length-normalised term-frequency key (retrieval/bm25_topk.py, IMPACT_KEY), so a lexeme's postings
can be read best first (θ for MaxScore). It replaces `retr_posting_lookup2_idx` (the same
three leading columns and included columns serve the lookups by lexeme as before). An expression,
so PostgreSQL maintains it on every write of a posting: nothing else to keep in step."""

from django.db import migrations, models

# Must stay the text of retrieval/bm25_topk.py's IMPACT_KEY (a query uses the index only when it
# repeats the expression).
IMPACT_KEY = (
    "((0.3::float8 + 0.9::float8 * length::float8 / (CASE collection WHEN 'turn_w1' THEN 30.0::float8"
    " WHEN 'turn_w2' THEN 45.0::float8 ELSE 12.0::float8 END)) / NULLIF(tf, 0)::float8)"
)


class Migration(migrations.Migration):

    dependencies = [
        ('retrieval', '0009_scope_in_unique_keys'),
    ]

    operations = [
        migrations.RunSQL(
            f"CREATE INDEX retr_posting_impact_idx ON retrieval_posting (scope_id, collection, lexeme, {IMPACT_KEY})"
            " INCLUDE (document_id, tf, length, speaker)",
            reverse_sql="DROP INDEX retr_posting_impact_idx",
        ),
        migrations.RemoveIndex(
            model_name='posting',
            name='retr_posting_lookup2_idx',
        ),
    ]
