# A time window's documents found by their moment (retrieval/search/eligibility.py: window_documents).

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('memories', '0010_embedding_deferred'),
        ('retrieval', '0007_posting_no_constraints'),
    ]

    operations = [
        migrations.AddIndex(
            model_name='searchdocument',
            index=models.Index(fields=['scope', 'occurred_at'], name='retr_searchdoc_moment_idx'),
        ),
    ]
