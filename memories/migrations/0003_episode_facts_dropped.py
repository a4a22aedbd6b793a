from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("memories", "0002_episode_claim"),
    ]

    operations = [
        migrations.AddField(
            model_name="episode",
            name="facts_dropped",
            field=models.PositiveIntegerField(default=0),
        ),
    ]
