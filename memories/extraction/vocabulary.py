"""The attribute vocabulary, in one place: which attributes there are, what each means, which hold
one value at a time, and the other spellings models use for them.

Single-valued attributes (lives_in, works_at, role, reports_to, age, relationship_status, name,
email, phone, favorite_*, and the families <function>_tool, <thing>_schedule, <thing>_date …)
hold one current value per subject, so a new value supersedes the old one; owns and leads hold
one subject per value (a service has one owner); everything else (likes, dislikes, has_pet,
has_child, speaks, visited, uses, decision …) accumulates. A team's tools are named by their
function (`tool_attribute`), whatever the word for the tool: payment provider, billing service
and payment processor are all payment_tool. An attribute
outside the vocabulary accumulates too: adding never ends a true fact by mistake.

The offline rules use these names always, the model prompts as a recommendation
(`memories.extraction.prompts`); reconciliation (`memories.services.reconcile`) and manual
corrections read `is_single_valued`; question analysis in `retrieval` maps questions onto them.
"""

import re
ATTRIBUTES: dict[str, str] = {
    "lives_in": "city or place the subject lives in now",
    "lived_in": "a place the subject used to live in",
    "works_at": "organization the subject works for",
    "worked_at": "an organization the subject used to work for",
    "role": "job title or position",
    "studies_at": "school or university",
    "studies": "subject of study",
    "graduated_from": "school or university the subject graduated from",
    "is_from": "country or city the subject comes from",
    "grew_up_in": "place the subject grew up in",
    "born_in": "place of birth",
    "birth_date": "date of birth (ISO date)",
    "age": "age in years",
    "spouse": "husband or wife",
    "partner": "girlfriend, boyfriend, partner or fiancé(e)",
    "relationship_status": "single, married, engaged, divorced …",
    "mother": "mother's name",
    "father": "father's name",
    "has_child": "a child (name when known)",
    "has_son": "a son",
    "has_daughter": "a daughter",
    "has_sister": "a sister",
    "has_brother": "a brother",
    "has_friend": "a friend",
    "has_pet": "a pet (its name when known, else the animal)",
    "likes": "something the subject likes, loves or enjoys (normalised: 'playing football' -> football)",
    "dislikes": "something the subject dislikes or hates",
    "plays": "a sport, game or instrument the subject plays",
    "speaks": "a language the subject speaks",
    "visited": "a place the subject went to or visited",
    "name": "the subject's own name",
    "email": "email address",
    "phone": "phone number",
    "birthday": "birthday as said",
    "number_of_children": "how many children",
    "neighbourhood": "the part of town the subject lives in ('in Montreal, up on the Plateau')",
    # A team's own knowledge (subject: the team, or a person)
    "reports_to": "the subject's manager (boss, lead, supervisor): whom they report to",
    "leads": "a team, project or area the subject leads (one lead per object)",
    "owns": "a service, system or area the subject owns (one owner per object)",
    "uses": "a tool or vendor the subject uses (many)",
    "<function>_tool": "the tool or vendor used for one function, e.g. payment_tool = Adyen, ticket_tool = Linear, "
    "ci_tool, on_call_tool, chat_tool, code_tool; provider / vendor / service / tracker / host mean tool",
    "decision": "something decided or agreed, as said ('keep Postgres for the queue')",
    "<thing>_schedule": "how often something recurs ('every Friday'), e.g. staging_password_schedule",
    "<thing>_date": "when an event is due, as a date ('12 May 2026'), e.g. launch_date, deadline_date",
    "<thing>_place": "where a team's event or office is ('the offsite is in Lisbon'), e.g. offsite_place",
    "<thing>_time": "the time of day of a team's event ('the standup is at 9:30'), e.g. standup_time",
    "budget": "a team's budget, as said ('40,000 euros')",
}
SINGLE_VALUED_ATTRIBUTES: frozenset[str] = frozenset(
    {
        "lives_in", "works_at", "role", "studies_at", "studies", "is_from", "grew_up_in", "born_in",
        "birth_date", "age", "spouse", "partner", "relationship_status", "mother", "father",
        "name", "email", "phone", "birthday", "number_of_children", "reports_to", "budget", "neighbourhood",
    }
)  # fmt: skip
# One subject per (attribute, value): a service has one owner, a team one lead, so a new owner of
# the billing service supersedes the old owner's fact (reconcile reads this).
SINGLE_SUBJECT_ATTRIBUTES: frozenset[str] = frozenset({"owns", "leads"})
# Families of attributes by their ending: one tool per function, one schedule, one date, one
# place and one time of a team's event ("the offsite is in Lisbon", "the standup is at 9:30").
SINGLE_VALUED_SUFFIXES = ("_tool", "_schedule", "_date", "_place", "_time", "_budget", "_length", "_price", "_version")
# "payment_provider", "error_tracker", "code_host" are one tool per function: payment_tool …
TOOL_WORDS = frozenset({
    "tool", "tools", "provider", "providers", "vendor", "vendors", "processor", "platform", "system", "service",
    "services", "tracker", "tracking", "host", "hosting", "app", "software", "solution", "stack",
})  # fmt: skip
# Words for one function, the first spelling kept: billing is payment, tickets are ticket …
FUNCTION_SYNONYMS = {
    "billing": "payment", "payments": "payment", "pay": "payment", "tickets": "ticket", "ticketing": "ticket",
    "issues": "ticket", "issue": "ticket", "oncall": "on_call", "on-call": "on_call", "paging": "on_call",
    "alerting": "on_call", "errors": "error", "dashboards": "dashboard", "docs": "doc", "documentation": "doc",
    "messaging": "chat", "repos": "code", "repository": "code", "repositories": "code", "git": "code",
    "repo": "code", "designs": "design", "deployments": "deploy", "deploys": "deploy",
    "alert": "on_call", "alerts": "on_call", "pager": "on_call", "pages": "on_call", "incidents": "on_call",
    "incident": "on_call", "bug": "ticket", "bugs": "ticket", "deployment": "deploy", "deploying": "deploy",
    "orchestrator": "orchestration", "orchestrate": "orchestration", "scheduler": "orchestration",
    # a team's common nouns in their other words (issue 24): one name for the thing, asked or said
    "books": "account", "bookkeeping": "account", "accounting": "account",
    "retreat": "offsite", "offsites": "offsite", "hq": "office", "headquarters": "office", "standups": "standup",
    "l10n": "localization", "localisation": "localization", "translation": "localization", "translations": "localization",
    "sound": "audio", "videoconferencing": "video", "videocalls": "video", "reporter": "report",
    "neighborhood": "neighbourhood", "neighbourhoods": "neighbourhood", "neighborhoods": "neighbourhood", "district": "neighbourhood",
    "wikis": "wiki", "retrospective": "retro", "retrospectives": "retro",
    # a business's functions in their other common words (stop 43): one name for each
    "observability": "monitoring", "apm": "monitoring", "iac": "infra", "infrastructure": "infra", "bi": "dashboard",
    "etl": "data_pipeline", "toggles": "feature_flag", "toggle": "feature_flag", "roster": "rota", "rosters": "rota",
    "rotas": "rota", "electricity": "energy", "parcels": "courier", "parcel": "courier", "till": "pos", "tills": "pos",
    "epos": "pos", "webstore": "webshop", "ecommerce": "webshop",
}  # fmt: skip
# Function names of more than one word, said as one ("continuous integration" is CI).
FUNCTION_PHRASES = {
    "continuous integration": "ci", "continuous delivery": "cd", "continuous deployment": "cd", "ci/cd": "ci",
    "source control": "code", "version control": "code", "code hosting": "code", "issue tracking": "ticket",
    "bug tracking": "ticket", "error tracking": "error", "error reporting": "error", "crash reporting": "crash_report",
    "crash reports": "crash_report", "crash reporter": "crash_report", "crash reporters": "crash_report", "on call": "on_call",
    "source code": "code", "knowledge base": "wiki", "video calls": "video", "video call": "video", "video conferencing": "video",
    "video meetings": "video", "build server": "ci", "build servers": "ci", "build system": "ci", "stand up": "standup",
    "stand-up": "standup", "daily sync": "standup", "early access": "early_access",
    # (stop 43) a business's functions in their other common words
    "infrastructure as code": "infra", "business intelligence": "dashboard", "feature flags": "feature_flag",
    "feature flag": "feature_flag", "feature toggles": "feature_flag", "feature toggle": "feature_flag",
    "outage page": "status_page", "incident page": "status_page", "point of sale": "pos", "online shop": "webshop",
    "online store": "webshop", "web shop": "webshop", "mailing list": "newsletter", "email marketing": "newsletter",
    "shift scheduling": "rota", "staff scheduling": "rota", "password manager": "password", "secrets management": "secret",
    "secrets manager": "secret",
}  # fmt: skip

# "Actually, it's Porto, not Lisbon" names no attribute: the extractor says this, and the memory
# finds the attribute of the subject's active fact whose value is the wrong one.
CORRECTION_ATTRIBUTE = "corrected_value"
# "Correction: the offsite is in Porto" / "Sorry, I meant Porto" name no wrong value: the offline
# extractor says this as `corrects`, and the memory takes the subject's current value of the
# attribute (for a bare value, a fact of the speaker's last episode) as the wrong one.
CORRECTS_CURRENT = "*current*"
# "We've replaced New Relic with Honeycomb" names no function: the offline extractor says this
# attribute (with previous_value New Relic), and the memory takes the attribute of the subject's
# active fact holding New Relic (else `uses`).
REPLACEMENT_ATTRIBUTE = "replaced_value"

# Other spellings of vocabulary attributes, mapped before facts are compared: a model that writes
# "resides_in" means lives_in, and must supersede the old city like lives_in does.
SYNONYMS = {
    "live_in": "lives_in", "resides_in": "lives_in", "lives_at": "lives_in", "based_in": "lives_in",
    "works_for": "works_at", "work_at": "works_at", "employer": "works_at", "employed_at": "works_at",
    "job_title": "role", "job": "role", "position": "role", "occupation": "role", "title": "role",
    "like": "likes", "loves": "likes", "love": "likes", "enjoys": "likes",
    "hates": "dislikes", "hate": "dislikes", "dislike": "dislikes",
    "pet": "has_pet", "pets": "has_pet", "child": "has_child", "children": "has_child",
    "language": "speaks", "languages": "speaks", "favourite_color": "favorite_color",
    "studying_at": "studies_at", "school": "studies_at",
    "boss": "reports_to", "manager": "reports_to", "has_manager": "reports_to", "supervisor": "reports_to",
    "report_to": "reports_to", "reports_to": "reports_to", "lead": "reports_to", "managed_by": "reports_to",
    "owner_of": "owns", "own": "owns", "is_responsible_for": "owns", "responsible_for": "owns",
    "lead_of": "leads", "led": "leads", "leads_team": "leads", "heads": "leads", "runs": "leads",
    "use": "uses", "uses_tool": "uses", "tool": "uses", "tools": "uses", "decided": "decision", "decisions": "decision",
    "policy": "decision",
}  # fmt: skip


def canonical_attribute(attribute: str) -> str:
    key = "_".join(attribute.lower().replace("-", " ").split())
    if key.startswith("favourite_"):
        key = "favorite_" + key.removeprefix("favourite_")
    if key in SYNONYMS:
        return SYNONYMS[key]
    parts = key.split("_")
    if len(parts) > 1 and parts[-1] in TOOL_WORDS and parts[0] not in {"favorite", "uses"}:
        return tool_attribute(" ".join(parts[:-1]))
    return key


def function_key(words: str) -> str:
    """"the billing service" → "payment", "on-call" → "on_call", "CI" → "ci", "dashboards" → "dashboard"."""
    out = []
    words = " ".join(words.lower().replace("-", " ").replace("_", " ").split())
    words = re.sub(r"\b(?:all|each|every|any)\s+(?:of\s+)?(?=(?:the|our)\b)", "", words)  # "all the infra" is the infra
    for phrase, key in FUNCTION_PHRASES.items():
        words = re.sub(rf"\b{re.escape(phrase)}\b", key.replace("_", "\u0000"), words)
    for word in words.split():
        word = word.replace("\u0000", "_")
        if word in {"the", "our", "a", "an", "my", "for", "of", "team", "team's"} or word in TOOL_WORDS:
            continue
        if word in {"page", "pages"} and len(words.split()) > 1:
            out.append("page")  # "print pages", "landing pages": pages, not paging
            continue
        word = FUNCTION_SYNONYMS.get(word, word)
        if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):  # "status", "analysis" are no plurals
            word = FUNCTION_SYNONYMS.get(word[:-1], word[:-1])
        out.append(word)
    joined = "_".join(out)
    return {"on_call": "on_call"}.get(joined, FUNCTION_SYNONYMS.get(joined.replace("_", "-"), joined))


def tool_attribute(function: str) -> str:
    """The attribute for the tool of one function: "billing service" → payment_tool."""
    key = function_key(function)
    return f"{key}_tool" if key else "uses"


def is_single_valued(attribute: str) -> bool:
    """lives_in, works_at, role, reports_to, favorite_*, *_tool, *_schedule, *_date … hold one value;
    likes, has_*, visited, uses, decision … accumulate."""
    canonical = canonical_attribute(attribute)
    return canonical in SINGLE_VALUED_ATTRIBUTES or canonical.startswith("favorite_") or canonical.endswith(SINGLE_VALUED_SUFFIXES)


def is_single_subject(attribute: str) -> bool:
    """owns, leads: one subject holds a value at a time (a service has one owner)."""
    return canonical_attribute(attribute) in SINGLE_SUBJECT_ATTRIBUTES
