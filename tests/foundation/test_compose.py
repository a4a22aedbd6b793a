"""Docker does not run here: check the compose file's commands are ones the project really has."""

import shlex
from pathlib import Path

import yaml
from django.core.management import get_commands, load_command_class

ROOT = Path(__file__).resolve().parents[2]
EXPECTED = {"db", "redis", "web", "worker", "beat", "ollama"}


def _compose():
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def test_compose_has_every_service_of_the_production_stack():
    services = _compose()["services"]
    assert EXPECTED <= set(services)
    assert services["db"]["image"].startswith("pgvector/pgvector")


def test_each_app_service_command_is_one_the_project_has():
    """web, worker and beat run memoryweb's own commands (serve, worker, beat), with options they take."""
    services = _compose()["services"]
    commands = get_commands()
    for name, program in (("web", "serve"), ("worker", "worker"), ("beat", "beat")):
        argv = shlex.split(services[name]["command"])
        assert argv[:2] == ["memoryweb", program], f"{name}: unexpected command {argv}"
        load_command_class(commands[program], program).create_parser("memoryweb", program).parse_args(argv[2:])
        env = services[name]["environment"]
        assert env["DATABASE_URL"].startswith("postgres://") and env["REDIS_URL"].startswith("redis://")
        assert env["DEBUG"] == "false"


def test_the_web_healthcheck_probes_healthz():
    assert "/healthz" in " ".join(_compose()["services"]["web"]["healthcheck"]["test"])


def test_env_example_documents_every_setting_compose_uses():
    documented = {line.split("=")[0].lstrip("# ").strip() for line in (ROOT / ".env.example").read_text().splitlines() if "=" in line}
    used = set(_compose()["services"]["web"]["environment"])
    assert used - {"MEMORYWEB_HOME"} <= documented | {"MEMORYWEB_HOME"}
    assert {"DATABASE_URL", "REDIS_URL", "LLM_PROVIDER", "EMBEDDER", "SECRET_KEY", "DEBUG", "ALLOWED_HOSTS", "MEMORYWEB_HOME"} <= documented
