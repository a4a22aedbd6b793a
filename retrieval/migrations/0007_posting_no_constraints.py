# Postings keep their foreign keys in Django (the ORM cascade) but not in the database: two checks a
# row at every commit were a third of indexing's time outside the model (retrieval/models.py: Posting).

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('memories', '0010_embedding_deferred'),
        ('retrieval', '0006_embedding_moves_out'),
    ]

    operations = [
        migrations.AlterField(
            model_name='posting',
            name='document',
            field=models.ForeignKey(db_constraint=False, db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='postings', to='retrieval.searchdocument'),
        ),
        migrations.AlterField(
            model_name='posting',
            name='scope',
            field=models.ForeignKey(db_constraint=False, db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='memories.scope'),
        ),
    ]
