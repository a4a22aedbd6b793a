from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("memories", "0003_embedding_moves_in_auditevent_moves_out"),
    ]

    operations = [
        migrations.AddField(
            model_name="episode",
            name="facts_dropped",
            field=models.PositiveIntegerField(default=0),
        ),
    ]
