# Embedding moves here from retrieval (memories resolves entities by their vectors); AuditEvent moves to accounts.

import django.db.models.deletion
import django.utils.timezone
import pgvector.django.vector
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('memories', '0002_episode_claim'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            # The table stays where it is, under its old name: only Django's idea of its app changes.
            state_operations=[
                migrations.CreateModel(
                    name='Embedding',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('target_type', models.CharField(choices=[('fact', 'Fact'), ('episode', 'Episode'), ('turn', 'Turn'), ('entity', 'Entity'), ('doc_fact', 'Doc Fact'), ('doc_episode', 'Doc Episode'), ('doc_turn', 'Doc Turn'), ('doc_turn_w1', 'Doc Turn W1'), ('doc_turn_w2', 'Doc Turn W2')], max_length=16)),
                        ('target_id', models.BigIntegerField()),
                        ('model', models.CharField(max_length=120)),
                        ('vec', pgvector.django.vector.VectorField()),
                        ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
                        ('scope', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='embeddings', to='memories.scope')),
                    ],
                    options={
                        'db_table': 'retrieval_embedding',
                    },
                ),
                migrations.DeleteModel(
                    name='AuditEvent',
                ),
                migrations.AddIndex(
                    model_name='embedding',
                    index=models.Index(fields=['scope', 'model', 'target_type'], name='retr_embedding_scope_idx'),
                ),
                migrations.AddConstraint(
                    model_name='embedding',
                    constraint=models.UniqueConstraint(fields=('target_type', 'target_id', 'model'), name='retrieval_embedding_unique_target_model'),
                ),
            ],
        ),
    ]
