from accounts.services import personal_team_ensure
from memoryweb.errors import InvalidInput
from memoryweb.management.base import MemorywebCommand
from memoryweb.progress import progress_bar
from retrieval.eval import DEFAULT_SCENARIO, MODES, format_report, format_scenario_report, run_locomo, run_scenarios


class Command(MemorywebCommand):
    help = ("Evaluate: `eval locomo` ingests LOCOMO conversations into throwaway scopes and scores evidence recall; "
            "`eval scenarios` stores a team's statements and scores the answers to its questions.")

    def add_command_arguments(self, parser) -> None:
        sub = self.add_subcommands(parser)
        locomo = sub.add_parser("locomo", help="evidence recall@k on LOCOMO conversations")
        locomo.add_argument("--dataset", required=True, action="append",
                            help="a LOCOMO JSON file (e.g. locomo10.json); repeat it for several")
        locomo.add_argument("--conversations", default="", help="comma-separated sample ids (default: all)")
        locomo.add_argument("--k", type=int, default=10)
        locomo.add_argument("--mode", choices=sorted(MODES), default="turns")
        locomo.add_argument("--out", help="write one JSON record per question here")
        locomo.add_argument("--cv", action="store_true",
                            help="choose the retrieval settings by leave-one-conversation-out cross-validation (retrieval/cv.py)")
        locomo.add_argument("--folds", type=int, help="with --cv: this many grouped folds instead of one per conversation")
        locomo.add_argument("--questions", type=int, help="with --cv: at most this many questions of each conversation")
        locomo.add_argument("--candidates", default="",
                            help="with --cv: only these candidates (comma-separated names, retrieval/cv.py; the default always)")
        rerank = sub.add_parser("rerank", help="the learned order of the head, fitted and measured leaving one LOCOMO conversation out")
        rerank.add_argument("--dataset", required=True, action="append", help="a LOCOMO JSON file; repeat it for several")
        rerank.add_argument("--conversations", default="", help="comma-separated sample ids (default: all)")
        rerank.add_argument("--questions", type=int, help="at most this many questions of each conversation")
        rerank.add_argument("--write", help="fit on every conversation and write the weights here (retrieval/rerank.json ships)")
        scenarios = sub.add_parser("scenarios", help="answer accuracy on a team scenario (statements, then questions)")
        scenarios.add_argument("--file", default=str(DEFAULT_SCENARIO), help="a scenario YAML file (default: the shipped team scenario)")

    def handle(self, *args, **options):
        principal = self.principal(options)
        if options["action"] == "scenarios":
            with progress_bar(label="eval scenarios", quiet=options["json"], unit="") as progress:
                report = run_scenarios(owner=principal.user, path=options["file"], progress=progress)
            self.emit(options, report, format_scenario_report(report))
            return
        if options["action"] == "rerank":
            return self._rerank(principal, options)
        if options.get("cv"):
            return self._cross_validate(principal, options)
        with progress_bar(label="eval locomo", quiet=options["json"], unit="") as progress:
            report = run_locomo(
                dataset=options["dataset"], team=personal_team_ensure(user=principal.user),
                conversations=_conversations(options),
                k=options["k"], mode=options["mode"], out=options.get("out"), progress=progress,
            )
        self.emit(options, report, format_report(report))

    def _cross_validate(self, principal, options) -> None:
        from retrieval.cv import candidates_named, cross_validate, format_cv_report

        names = [c.strip() for c in options.get("candidates", "").split(",") if c.strip()]

        with progress_bar(label="eval locomo --cv", quiet=options["json"], unit="") as progress:
            report = cross_validate(
                dataset=options["dataset"], team=personal_team_ensure(user=principal.user),
                conversations=_conversations(options),
                k=options["k"], mode=options["mode"], folds=options.get("folds"), questions=options.get("questions"),
                out=options.get("out"), progress=progress, candidates=candidates_named(names),
            )
        self.emit(options, report, format_cv_report(report))

    def _rerank(self, principal, options) -> None:
        from retrieval.rerank_eval import format_rerank_report, heads_gather, rerank_cross_validate, rerank_write, weights_path_check

        if options.get("questions") is not None and options["questions"] < 1:
            raise InvalidInput("questions must be at least 1.")
        if options.get("write"):
            weights_path_check(options["write"])
        with progress_bar(label="eval rerank", quiet=options["json"], unit="") as progress:
            heads = heads_gather(dataset=options["dataset"], team=personal_team_ensure(user=principal.user),
                                 conversations=_conversations(options), questions=options.get("questions"), progress=progress)
        report = rerank_cross_validate(heads)
        if options.get("write"):
            written = rerank_write(heads, options["write"])
            report.update(written=options["write"], l2=written["l2"], fitted_questions=written["questions"])
        self.emit(options, report, format_rerank_report(report))


def _conversations(options) -> list[str] | None:
    return [c.strip() for c in options["conversations"].split(",") if c.strip()] or None
