# Embedding moves to memories (see memories 0003).

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('retrieval', '0005_posting_speaker'),
        ('memories', '0003_embedding_moves_in_auditevent_moves_out'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            # The table stays where it is, under its old name: only Django's idea of its app changes.
            state_operations=[
                migrations.DeleteModel(
                    name='Embedding',
                ),
            ],
        ),
    ]
