# AuditEvent moves here from memories, so accounts can audit token and membership changes.

import django.db.models.deletion
import django.utils.timezone
import uuid
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('accounts', '0002_initial'),
        ('memories', '0003_embedding_moves_in_auditevent_moves_out'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            # The table stays where it is, under its old name: only Django's idea of its app changes.
            state_operations=[
                migrations.CreateModel(
                    name='AuditEvent',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('public_id', models.UUIDField(default=uuid.uuid4, editable=False, unique=True)),
                        ('actor_label', models.CharField(blank=True, max_length=200)),
                        ('action', models.CharField(max_length=64)),
                        ('target_type', models.CharField(max_length=64)),
                        ('target_id', models.CharField(max_length=64)),
                        ('before', models.JSONField(blank=True, null=True)),
                        ('after', models.JSONField(blank=True, null=True)),
                        ('created_at', models.DateTimeField(db_index=True, default=django.utils.timezone.now)),
                        ('actor_token', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='accounts.apitoken')),
                        ('actor_user', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('scope', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.CASCADE, related_name='audit_events', to='memories.scope')),
                    ],
                    options={
                        'db_table': 'memories_auditevent',
                        'ordering': ['-created_at', '-id'],
                        'indexes': [models.Index(fields=['target_type', 'target_id', 'created_at'], name='mem_audit_target_idx')],
                    },
                ),
            ],
        ),
    ]
