from django.db import migrations, models


class Migration(migrations.Migration):
    """When a support's episode said the value held from. Rows written before stay null (not
    known): reconciliation never restores a value from them."""

    dependencies = [
        ("memories", "0014_episode_turn_in_scope"),
    ]

    operations = [
        migrations.AddField(
            model_name="factsupport",
            name="valid_from",
            field=models.DateTimeField(blank=True, null=True),
        ),
    ]
