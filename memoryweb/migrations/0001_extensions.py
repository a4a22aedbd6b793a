"""The very first migration: the PostgreSQL extensions everything else relies on."""

from django.contrib.postgres.operations import CreateExtension, TrigramExtension
from django.db import migrations


class Migration(migrations.Migration):
    initial = True
    dependencies = []
    run_before = [("accounts", "0001_initial")]

    operations = [
        CreateExtension("vector"),
        TrigramExtension(),
    ]
