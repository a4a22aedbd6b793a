import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("memories", "0008_mergeproposal"),
    ]

    operations = [
        migrations.AddField(
            model_name="episode",
            name="consolidated_into",
            field=models.ForeignKey(
                blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL,
                related_name="consolidated_from", to="memories.episode",
            ),
        ),
    ]
