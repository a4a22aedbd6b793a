"""Who a clause is about: I / we → the speaker; "my sister Anna"; a capitalised name; he / she →
the last name mentioned. "my X is Y" details of the speaker are read here too."""

import re

from memories.extraction.offline.context import Clause, Context
from memories.extraction.offline.facts import fact_add, relation_sentence
from memories.extraction.offline.predicates import predicate_read
from memories.extraction.offline.rules.people import pet_named_in_lowercase
from memories.extraction.offline.rules.places import HOME, HOME_NOUNS, HOME_TRIP
from memories.extraction.offline.rules.work import past_employer_add
from memories.extraction.offline.rules.team import TEAM_THINGS, decision_said, firm_serves, known_function, our_detail, owner_said, recurring, singular, time_value
from memories.extraction.vocabulary import TOOL_WORDS
from memories.extraction.vocabulary import CORRECTION_ATTRIBUTE, CORRECTS_CURRENT
from memories.extraction.offline.values import cut_value, job_title, plain_value, proper_name, snake_case
from memories.extraction.offline.words import NAME, NOT_NAMES, PET_RE, PETS, PREDICATE_VERBS, RELATION_RE, RELATIONS


def correction_taken(clause: Clause, *, correcting: bool = False) -> None:
    """"… Munich, not Berlin", "… at 10:00, not 9:30": a correction of the value said before,
    noted on the clause (`corrects`) and cut from its text. Chat leaves the comma out ("it's mosaic not citra",
    "MARCUS not martin"): read so when the clause says "it's" or the sentence is a correction (`correcting`)."""
    if (correcting or re.match(r"(?:it|that)(?:'s|\s+is|\s+was)\s", clause.text, re.I)) and (m := re.search(
            r"^(?P<head>(?:(?:it|that)(?:'s|\s+is|\s+was)\s+(?:actually\s+)?)?(?:[\w'&.\-]+\s+){0,5}?[\w'&.\-]+)\s+not\s+(?:in\s+|at\s+|on\s+)?"
            r"(?P<wrong>(?!(?:a|an|the|sure|ready|yet|now|really|quite|so|too|very|just|that|this|me|us|you|him|her|them|it)\b)[^,]{1,40})$", clause.text, re.I)):
        wrong = time_value(m["wrong"]) or cut_value(m["wrong"]) or m["wrong"].strip(" .")
        if wrong and wrong.lower() not in {"me", "i", "myself", "us", "mine"}:
            clause.corrects, clause.text = wrong, m["head"].strip()
            return
    if m := re.search(r"(?:,\s*(?:and\s+)?not|\s+rather than)\s+(?:in\s+|at\s+|on\s+)?(?P<wrong>(?:[^,]|,(?=\d{3})){1,60})$", clause.text, re.I):
        wrong = time_value(m["wrong"]) or (m["wrong"].strip(" .") if re.fullmatch(r"[$€£]?[\d,.]+", m["wrong"].strip(" ."))
                                           else cut_value(m["wrong"])) or m["wrong"].strip(" .")
        if wrong:
            # "Ines owns localization, not me": the speaker is no value of the fact; the new holder is said
            clause.corrects, clause.text = (None if wrong.lower() in {"me", "i", "myself", "us", "mine"} else wrong), clause.text[: m.start()].strip()
    # "the offsite is not in Lisbon, it's in Porto" → "the offsite is in Porto", correcting Lisbon
    elif m := re.match(r"^(?P<head>.+?)\s+(?P<be>is|are|was|were)\s+not\s+(?:in\s+|at\s+|on\s+)?(?P<wrong>[^,]{1,60}),\s*"
                       r"(?:(?:it|they|that|this)\s+(?:is|are|was|were)\s+|but\s+)(?P<right>.+)$", clause.text, re.I):
        wrong = time_value(m["wrong"]) or cut_value(m["wrong"])
        if wrong:
            clause.corrects, clause.text = wrong, f"{m['head']} {m['be']} {m['right']}"


# Words that, after "the team" / the team's name, start a predicate ("the team migrated …"),
# where any other word starts a thing of the team ("the team offsite is …").
_PREDICATE_STARTS = set(
    "is are was were has have had uses use used owns own leads lead runs run decided agreed chose picked adopted relies "
    "rely reports report switched migrated moved changed replaced will would might can could should does did do "
    "went started joined left".split()
)


def team_said_as_we(text: str, ctx: Context) -> str:
    """In a team's scope, the team said by name or as "the team" is "we" ("Orbit has migrated its
    ticketing …" → "we has migrated our ticketing …", "the team migrated …"), and its things are
    "our" ("the team's chat tool", "Orbit's standup", "the team offsite" → "our …")."""
    if not ctx.team:
        return text
    name = re.escape(ctx.team)
    text = re.sub(rf"(?<=\s)(?:the\s+)?{name}(?:'s|s')\s+", "our ", text, flags=re.I)  # "we're moving Tidewater's chat …"
    m = re.match(rf"^(?:the\s+{name}\s+team|team\s+{name}|{name}|(?:the|our)\s+team)(?P<poss>'s|s')?\s+(?P<rest>\S.*)$", text, re.I)
    if not m or (m[0][:1].islower() and not m[0].lower().startswith(("the ", "our "))):
        return text
    rest = m["rest"]
    adverb = re.match(r"(?:(?:now|also|just|still|recently|finally|officially|already|currently|actually)\s+)+", rest, re.I)
    if adverb and not m["poss"] and len(rest.split()) > len(adverb[0].split()):
        rest = rest[adverb.end():]  # "the team now uses …": the verb after the adverb
    first = rest.split()[0].lower()
    second = (rest.split()[1:2] or [""])[0].lower()
    # "the team tracks bugs …": a verb in -s, since a noun in -s would be followed by one ("the team budgets are …")
    verb_s = first.endswith("s") and not first.endswith("ss") and second not in _PREDICATE_STARTS | {"", "of", "for"}
    if m["poss"] or (first not in _PREDICATE_STARTS and not first.endswith("ed") and not verb_s):
        return f"our {rest}"
    return "we " + re.sub(r"\b(?:its|their)\b", "our", rest, flags=re.I)


# The verb that ends a clause's subject, in any tense ("paging goes through …", "logs have moved to …").
_SUBJECT_ENDS = re.compile(
    r"\s(?:is|are|was|were|will|would|has|have|had|goes|go|went|gone|comes|come|came|lives|live|lived|sits|sit|runs|run|ran|"
    r"moves|moved|moving|slipped|slips|happens|happened|takes|took|starts|started|stays|stayed|belongs|belonged|kicks|kicked|"
    r"ships|shipped|launches|launched|gets|get|got|opens|opened)\b", re.I)
_ADVERBS = frozenset("now still just also already finally recently officially currently actually never always soon then again too".split())
_PLURAL_VERB = re.compile(r"(?:are|were|have|go|come|live|sit|run|get|stay|belong)$", re.I)


# Words that say which one of a thing by when it is, opening its name ("Christmas party", "spring offsite", "Monday
# standup"): not the small words of `NOT_NAMES` that open a sentence. Not "new": "new office is in Leeds" names the
# office's new place, which `extract._attribute_aligned` would take for another thing's.
_WHEN_WORDS = frozenset("christmas xmas easter spring summer autumn fall winter monday tuesday wednesday thursday friday saturday sunday "
                        "january february march april may june july august september october november december".split())


def common_subject(text: str, ctx: Context) -> bool:
    """A team's thing said without "the" or "our", as chat does: "paging goes through Opsgenie",
    "offsite 2024 will be in Kraków", "Season 5 launch date is 19 September", "Secrets live in
    Vault". The words before the verb are a noun phrase, not a name or a pronoun: typed in
    lowercase, or a capitalised phrase holding a lowercase noun ("Kraków offsite"), or one
    capitalised word with a plural verb (a person "lives", things "live"). Such a clause is read
    as "the …", where the rules ask the thing to be a team thing or a function."""
    if not ctx.team:
        return False
    verb = _SUBJECT_ENDS.search(f" {text}")
    if not verb or verb.start() == 0:
        return False
    head = text[: verb.start() - 1].split() if verb.start() > 0 else []
    while head and (head[-1].lower() in _ADVERBS or head[-1].lower().endswith("ly")):
        head = head[:-1]  # "Tomasz now lives in Porto": the adverb is no part of the subject
    if len(head) > 1 and head[0].lower() in {"all", "every", "each"} and head[1][:1].islower():
        head = head[1:]  # "all calls are on Teams now": every one of a thing
    dated = len(head) >= 2 and head[0].lower() in _WHEN_WORDS and head[1][:1].islower()  # "Christmas party", "summer social"
    if not 1 <= len(head) <= 6 or not all(re.fullmatch(r"[\w][\w\-'.&/]*", w) for w in head) or (head[0].lower() in NOT_NAMES and not dated) \
            or head[0].lower() in {"i", "my", "me", "us"} or "'" in head[0]:
        return False
    if head[0][:1].isdigit() or not head[0][:1].isalpha():
        return False
    # after "for / of", any words ("feature flags for all the event toggles"); before it, no pronoun or article
    lead = re.split(r"\s(?:for|of|from|between)\s", " " + " ".join(head) + " ", maxsplit=1)[0].split()
    if any(w.lower() in NOT_NAMES for w in lead[1:]):
        return False
    if head[0][:1].islower():
        return True
    if any((w[:1].islower() and w.isalpha()) or w[:1].isdigit() for w in lead[1:]):  # "Kraków offsite", "Season 16"
        return True
    if len(head) == 1 and known_function(head[0]) and head[0].lower() not in ctx.people:
        return True  # "Payroll is on BrightPay", "Paging goes through incident.io": one word, a function
    verb_word = verb[0].strip()
    return len(head) == 1 and bool(_PLURAL_VERB.fullmatch(verb_word)) and head[0].lower().endswith("s")


# A role announced in the future is held from when it is said ("Nadia will lead Hearthwatch", "I'll own the
# calendar", "from June Felix will report to Oskar"); other plans are no facts.
_ROLE_ANNOUNCED = re.compile(r"\b(?:will|(?:am|is|are) going to)\s+(?:now\s+|also\s+)?(?:own|lead|head|manage|report to|take over|look after|"
                             r"be (?:in charge of|responsible for|the owner of|the lead (?:of|for)|the head of))\b", re.I)


# Where the speaker worked before: "Before Bramble I was at Glovo for three years", "before this I spent four years at
# Zalando", "I was at Monzo before this", "I came over from the University of Salford", "joined from Spreewald
# Analytics", "previously at Beacon Labs", "my last job was Lighthouse QA": a past employer (worked_at).
_ORG = rf"(?:{NAME}|(?-i:[A-Z][A-Z0-9&]{{1,7}}))"  # a name, or an acronym ("before NTA")
_BEFORE_HERE = rf"before\s+(?:this(?:\s+(?:job|role|team|one|gig|place))?|joining(?:\s+(?:us|the team|{_ORG}))?|(?:coming|moving)\s+(?:here|to\s+{_ORG})|{_ORG}(?:\s+{NAME})?)"
_PRIOR = [
    re.compile(rf"^{_BEFORE_HERE}\s*,?\s+(?:i\s+)?(?:was|worked|spent\s+(?:\w+\s+){{1,3}}?)\s*(?:(?:as\s+)?(?:a|an)\s+[\w\- ]+?\s+)?(?:at|with|for)\s+(?P<org>.+)$", re.I),
    re.compile(rf"^i\s+(?:was|worked|spent\s+(?:\w+\s+){{1,3}}?)\s*(?:(?:as\s+)?(?:a|an)\s+[\w\- ]+?\s+)?(?:at|with|for)\s+(?P<org>.+?)\s+(?:for\s+(?:\w+\s+){{1,3}}?)?{_BEFORE_HERE}\b.*$", re.I),
    re.compile(r"^(?:i\s+)?(?:came over|moved over|joined(?:\s+(?:us|the team))?)\s+from\s+(?P<org>.+)$", re.I),
    re.compile(r"^(?:i\s+was\s+)?previously\s+(?:(?:a|an)\s+[\w\- ]+?\s+)?(?:at|with)\s+(?P<org>.+)$", re.I),
    re.compile(r"^my\s+(?:last|previous|old|former)\s+(?:job|employer|company|workplace)\s+was\s+(?:at\s+|with\s+)?(?P<org>.+)$", re.I),
    # "I used to be at Ordnance Survey before this", "I used to work for Sage": where the speaker was
    re.compile(r"^i\s+used\s+to\s+(?:be|work)\s+(?:at|with|for)\s+(?P<org>.+)$", re.I),
    # "I left Booking.com to join Bramble": the employer left for this one
    re.compile(r"^i\s+(?:left|quit)\s+(?P<org>.+?)\s+to\s+(?:join|come|move|start)\b.*$", re.I),
    # "Oskar here, ex-Vattenfall", "I'm ex-BBC": a former employer worn as a title
    re.compile(rf"^(?:(?:i'?m\s+)?(?P<me>{NAME})(?:\s+here)?\s*,\s*)?(?:i'?m\s+|i\s+am\s+)?ex-(?P<org>(?-i:[A-Z])[\w&.]*(?:\s+(?-i:[A-Z])[\w&.]*)?)(?:\s+[a-z]+)?$", re.I),
]


def _prior_employer(text: str, clause: Clause, ctx: Context) -> bool:
    for pattern in _PRIOR:
        if (m := pattern.match(text)) and m.groupdict().get("me") and m["me"].casefold() != ctx.speaker.casefold():
            return False  # "Priya here, ex-BBC" said by another: not the speaker's
        if m:
            org_text = re.split(r"\s+(?:for|doing|where|on|as|in|mostly|working|since|until|so|but|too|before)\s+|,", m["org"], maxsplit=1)[0]
            org = proper_name(cut_value(org_text), clause)
            if org and org[:1].isupper() and org.split()[0].lower() not in NOT_NAMES and org.casefold() != (ctx.team or "").casefold():
                past_employer_add(ctx, clause, ctx.speaker, org, confidence=0.8)
                return True
            return False
    return False


# A pastime said by what it is to the speaker ("woodworking is my therapy"), and what they do when not at work.
_PASTIME_IS_MINE = re.compile(r"^(?P<what>[a-z][\w\-]*(?:\s+[a-z][\w\-]*){0,2})\s+(?:is|has become)\s+my\s+(?:new\s+|favou?rite\s+)?"
                              r"(?:happy place|therapy|passion|obsession|escape|hobby|pastime|way to (?:unwind|relax|switch off))$", re.I)
_LEISURE_SAID = re.compile(r"^(?:outside\s+(?:of\s+)?work|in\s+my\s+(?:spare|free|own)\s+time|for\s+fun|when\s+i'?m\s+not\s+(?:at\s+)?work(?:ing)?)"
                           r"\s*,?\s+i\s+(?!am\b|was\b|have\b|had\b|will\b|would\b|can\b|could\b)(?P<what>[a-z]+\s+.+)$", re.I)


def _cut_at_reason(text: str) -> str:
    """"sing in a choir so no late calls": the activity without a reason or an aside after it."""
    return re.split(r"\s+(?:so|but|because|which|and then)\s+|\s*[,;(]", text, maxsplit=1)[0].strip()


_REPORTING = re.compile(rf",\s+(?:and\s+)?(?:now\s+|still\s+)?reporting\s+(?:directly\s+|straight\s+)?to\s+(?P<who>{NAME}(?:\s+{NAME})?)\b.*$")


# Words that make a clause a plan, a wish or a hypothetical, which states no fact.
HYPOTHETICAL = re.compile(r"\bnever\b|\bif\b|\bwould\b|\bwill\b|\bmight\b|\bcould\b|\bshould\b|\bwant(?:s|ed)? to\b|\bhope\b|\bwish\b", re.I)


def read_clause(clause: Clause, ctx: Context, previous_subject: str | None) -> str | None:
    """Facts from one clause; returns its subject, which a following subjectless clause inherits."""
    text = clause.text
    if ctx.team and (m := re.match(rf"^(?P<name>{NAME}),\s+(?P<rest>\S.+)$", text)) and m["name"].lower() in ctx.people \
            and m["name"].casefold() != ctx.speaker.casefold():
        text = clause.text = m["rest"]  # "Aroha, all our shifts live in Connecteam": said to one of the team
    if ctx.team and re.match(r"^(?:the|our)\s+[\w\-. ]{1,40}?\s+will (?:be(?: held)?|take place|happen)\s+(?:(?:in|at|on)\s+|[$€£]?\d)", text, re.I):
        text = re.sub(r"\s+will (?:be(?: held)?|take place|happen)\s+", " is ", text, count=1)  # "the 2026 offsite will be in Tirana": a team's event, as set
    if m := _REPORTING.search(text):
        # "I'm moving to economy design, reporting to Mireille Dubois": the participle's line is the clause subject's
        who = re.match(rf"^(?:i\b|(?P<name>{NAME}(?:\s+{NAME})?)\s)", text, re.I)
        subject = ctx.speaker if who and not who["name"] else (who["name"] if who and who["name"].split()[0].lower() not in NOT_NAMES else None)
        if subject and m["who"].casefold() != subject.casefold():
            fact_add(ctx, clause, subject, "reports_to", m["who"], obj=m["who"], obj_kind="person", confidence=0.8)
            ctx.subject_kinds.setdefault(m["who"], "person")
        text = clause.text = text[: m.start()].strip()
    if ctx.team and _prior_employer(text, clause, ctx):
        return ctx.speaker
    if ctx.team and (m := re.match(rf"^(?:a\s+(?:big\s+|warm\s+|huge\s+)?)?welcome(?:\s+(?:back|aboard|to the team))?,?\s+(?P<who>{NAME})$", text, re.I)) \
            and m["who"].split()[0].lower() not in NOT_NAMES and ctx.subject_kinds.get(m["who"], "person") == "person":
        ctx.last_third_person = m["who"]  # "welcome Felix! he joins us from Hermes": whom "he" means next
        return previous_subject
    if (home := _OUR_HOME.search(text)) and home["place"].split()[0].lower() not in NOT_NAMES and not HYPOTHETICAL.search(text) \
            and not (ctx.team and (thing := re.match(r"^(?:the|our)\s+([\w\-]+)", text, re.I)) and singular(thing[1]).lower() in TEAM_THINGS):
        # "the pottery wheel in the shed at our place in Mytholmroyd": where the speaker's household lives (not a
        # thing of the team's called "Mytholmroyd place")
        fact_add(ctx, clause, ctx.speaker, "lives_in", home["place"], obj=home["place"], obj_kind="place", confidence=0.8)
        return ctx.speaker
    decided = re.search(r"\b(?:decided|agreed|decision|resolved|voted|concluded)\b", text, re.I) or _ROLE_ANNOUNCED.search(text)
    if not decided and HYPOTHETICAL.search(text):
        return previous_subject  # plans, wishes and hypotheticals are not facts (a decision about the future is one)
    if decision_said(text, clause, ctx):
        return ctx.we
    if owner_said(text, clause, ctx):
        return ctx.speaker
    # "Ruben is now our tech lead", "Mara has become the team's designer": a role in the team
    if ctx.team and (m := re.match(rf"^(?P<who>{NAME}(?:\s+{NAME})?)\s+(?:is|has been|became|has become|was made|got promoted to)\s+(?:now\s+|officially\s+)?"
                                   r"(?:our|the team's|the)\s+(?:new\s+)?(?P<role>[\w\- ]{2,40})$", text)):
        role = job_title(m["role"], strict=True)
        if role and m["who"].split()[0].lower() not in NOT_NAMES:
            fact_add(ctx, clause, m["who"], "role", role, confidence=0.85)
            ctx.subject_kinds.setdefault(m["who"], "person")
            ctx.last_third_person = m["who"]
            return m["who"]
    # "Felix's manager is Oskar", "Hugo's new boss will be Imogen": Felix reports to Oskar
    if m := re.match(rf"^(?P<whose>{NAME}(?:\s+{NAME})?)'s\s+(?:new\s+)?(?:line\s+)?(?:manager|boss|supervisor)\s+(?:is|was|has been|became|has become|am|is now)\s+(?:now\s+)?(?P<who>me|{NAME}(?:\s+{NAME})?)(?:\s+now)?$", text):
        who = ctx.speaker if m["who"] == "me" else m["who"]
        if m["whose"].split()[0].lower() not in NOT_NAMES and who.split()[0].lower() not in NOT_NAMES:
            fact_add(ctx, clause, m["whose"], "reports_to", who, obj=who, obj_kind="person", confidence=0.85)
            ctx.subject_kinds.setdefault(m["whose"], "person")
            ctx.subject_kinds.setdefault(who, "person")
            return m["whose"]
    # "Statsig is our experimentation platform now", "Kafka has become the team's event bus": the function's tool said first
    if ctx.team and (m := re.match(rf"^(?P<value>(?-i:[A-Z])[\w.\-]*(?:\s+(?-i:[A-Z0-9])[\w.\-]*){{0,3}})\s+(?:is|are|was|were|has been|have been|became|has become)\s+(?:now\s+)?"
                                   r"(?:our|the team's)\s+(?:new\s+|current\s+|main\s+|primary\s+|default\s+|official\s+)?(?P<what>(?i:[a-z][\w\- ]{1,40}?))(?:\s+now)?$", text)):
        if m["value"].split()[0].lower() not in NOT_NAMES and ctx.subject_kinds.get(m["value"]) != "person" and not job_title(m["what"], strict=True) \
                and (known_function(m["what"]) or m["what"].split()[-1] in TOOL_WORDS):
            if our_detail(f"{m['what']} is {m['value']}", clause, ctx):
                return ctx.we
    # "woodworking is my therapy", "birdwatching is my happy place": a pastime, as the speaker calls it
    if m := _PASTIME_IS_MINE.match(text):
        what = m["what"].strip()
        what = what[0].lower() + what[1:] if what[1:].islower() else what  # the capital the clause's start gave it
        if what.split()[0].lower() not in NOT_NAMES and not HYPOTHETICAL.search(text):
            fact_add(ctx, clause, ctx.speaker, "likes", what, confidence=0.75)
            return ctx.speaker
    # "outside work I sing in a choir", "in my spare time I restore old bikes": what the speaker does for fun
    if (m := _LEISURE_SAID.match(text)) and (what := plain_value(_cut_at_reason(m["what"]), max_words=6)):
        fact_add(ctx, clause, ctx.speaker, "likes", what, confidence=0.75)
        return ctx.speaker
    # "Blue is my favorite color"
    if m := re.match(r"^(?P<value>.+?)\s+(?:is|are)\s+my\s+(?:all-time\s+|absolute\s+)?favou?rite\s+(?P<what>[a-z]+(?:\s+[a-z]+)?)$", text, re.I):
        value = plain_value(m["value"])
        if value:
            fact_add(ctx, clause, ctx.speaker, f"favorite_{snake_case(m['what'])}", value)
        return ctx.speaker
    if cleft := _CLEFT.match(text):  # "Sentry is what we use for errors" → "we use Sentry for errors"
        if said := _CLEFT_REST.match(cleft["rest"]):
            text = f"{said['subj']} {said['verb']} {cleft['x']} {said['prep']}{said['tail']}"
    if _introduction(text, clause, ctx):
        return ctx.speaker
    if ctx.team and (m := _INSTITUTION_SWITCH.match(text)) and (m["bare"] or m["obj"] or re.search(r"\bfrom\s", m["tail"], re.I)):
        # "the uni switched us from Agresso to Concur", "IT has moved everyone to Teams": a switch made for the team
        # by who runs it is the team's; "Moved the flux scripts from Bitbucket to GitLab", "Ditched Premiere for DaVinci
        # Resolve", "Moving our charts from Flourish to Datawrapper this month": chat's switch without "I"
        said = m["bare"] or f"{m['verb']} {m['tail']}"
        predicate_read(f"are {said}" if said.split()[0].lower().endswith("ing") else said, ctx.we, clause, ctx, first_person=True)
        return ctx.we
    if ctx.team and (m := _PERSON_SWITCH.match(text)) and m["who"].split()[0].lower() not in NOT_NAMES \
            and ctx.subject_kinds.get(m["who"], "person") == "person":
        # "Fiona's moved us to Cairnview Pet Cremation", "Tom has switched everyone to Slack": a switch one of the team
        # made for all of it is the team's ("moved" here is no move of house: "moved us to" a firm)
        predicate_read(f"switched {m['tail']}", ctx.we, clause, ctx, first_person=True)
        return ctx.we
    if ctx.team and (m := re.match(r"^(?:it is|it's|its)\s+all\s+(?P<b>(?-i:[A-Z])[\w.\-]*(?:\s+(?-i:[A-Z0-9])[\w.\-]*){0,2})(?:\s+now)?(?:\s+(?P<rest>for\s+.+))?$", text, re.I)):
        # "Pelcro is gone, it's all Piano now for subscriptions": the team's tool (for that function)
        predicate_read(f"use {m['b']} {m['rest'] or ''}".strip(), ctx.we, clause, ctx, first_person=True)
        return ctx.we
    if ctx.team and (m := re.match(r"^all\s+(?P<rest>(?:our|the)\s+\S.*)$", text, re.I)):
        text = clause.text = m["rest"]  # "all our shifts live in Connecteam": our shifts
    if (m := re.match(r"^(?:we|us|our team|the team)\s+(?P<rest>.+)$", text, re.I)) and (ctx.team or m[0].lower().startswith(("we ", "us "))):
        predicate_read(m["rest"], ctx.we, clause, ctx, first_person=True)
        return ctx.we
    if m := re.match(r"^(?:i|me and my \w+|my \w+ and (?:i|me)|(?-i:[A-Z]\w+) and (?:i|me))\s+(?P<rest>.+)$", text, re.I):
        predicate_read(m["rest"], ctx.speaker, clause, ctx, first_person=True)
        return ctx.speaker
    if m := re.match(r"^our\s+(?P<rest>.+)$", text, re.I):
        our_detail(m["rest"], clause, ctx)
        return ctx.team
    if recurring(text, clause, ctx):
        return ctx.we
    # "the offsite is in Lisbon", "the repo is hosted on GitHub", "Standup is at 10:00": a team thing's detail
    if ctx.team and (m := re.match(r"^the\s+(?P<rest>.+)$", text, re.I)) and our_detail(m["rest"], clause, ctx, the=True):
        return ctx.we
    if not text.strip():
        return previous_subject
    if firm_serves(text, clause, ctx):  # "Bramble Hill Farm collects our spent grain"
        return ctx.we
    bare_thing = singular(text.split()[0]).lower() in TEAM_THINGS  # "standup has moved …", after "my mistake:" too
    if ctx.team and (text[:1].isupper() or bare_thing or clause.topic or clause.corrects) and text.split()[0].lower() not in NOT_NAMES \
            and text.split()[0].lower() not in ctx.people and our_detail(text[0].lower() + text[1:], clause, ctx, the=True):
        return ctx.we
    # "Actually, it's Porto, not Lisbon": the speaker's fact whose value is Lisbon, corrected.
    # "Sorry, I meant Porto, not Lisbon": the right value alone.
    # a bare value: a time, a name of capitalised words ("Hamilton", "Google Meet"), an amount ("two weeks", "$19.99")
    bare = clause.corrects and (time_value(text) or (proper_name(text, clause) if len(text.split()) <= 3 and all(w[:1].isupper() or w[:1].isdigit() for w in text.split()) else None)
                                or (text if re.fullmatch(r"(?:[$€£]?\d[\d,.]*|one|two|three|four|five|six|seven|eight|nine|ten|twelve)(?:\s+[a-z%]+){0,2}", text, re.I) else None))
    if bare:
        wrong = "" if clause.corrects == CORRECTS_CURRENT else f", not {clause.corrects}"
        fact_add(ctx, clause, ctx.speaker, CORRECTION_ATTRIBUTE, bare, sentence=f"{ctx.speaker}: {bare}{wrong}.")
        return ctx.speaker
    if clause.corrects and (m := re.match(r"^(?:it|that)\s+(?:is|was)\s+(?:actually\s+)?(?:in\s+|at\s+)?(?P<right>.+)$", text, re.I)):
        m_right = re.sub(r"\s+(?:that\s+|which\s+)?(?:we|i|they|you|he|she)\s+\w+.*$", "", m["right"], flags=re.I)  # "it's Figma we use now"
        right = time_value(m_right) or proper_name(cut_value(m_right), clause) or plain_value(m_right)
        if right:
            fact_add(ctx, clause, ctx.speaker, CORRECTION_ATTRIBUTE, right, sentence=f"{ctx.speaker}: {right}, not {clause.corrects}.")
        return ctx.speaker
    if m := re.match(r"^my\s+(?P<rest>.+)$", text, re.I):
        _possessive(m["rest"], clause, ctx)
        return ctx.speaker
    # "Alma is my boss", "Greta is now my manager": the speaker reports to them
    if m := re.match(rf"^(?P<who>{NAME}(?:\s+{NAME})?)\s+(?:is|has been|became|has become)\s+(?:now\s+|still\s+)?my\s+(?:new\s+)?(?:line\s+)?(?:manager|boss|supervisor|lead)$", text):
        if m["who"].split()[0].lower() not in NOT_NAMES:
            fact_add(ctx, clause, ctx.speaker, "reports_to", m["who"], obj=m["who"], obj_kind="person")
            ctx.subject_kinds.setdefault(m["who"], "person")
            return ctx.speaker
    if m := re.match(r"^(?P<pronoun>he|she)\s+(?P<rest>.+)$", text, re.I):
        if ctx.last_third_person:
            predicate_read(m["rest"], ctx.last_third_person, clause, ctx, first_person=False, confidence=0.7)
            return ctx.last_third_person
        return None
    if (m := re.match(rf"^(?P<name>{NAME}(?:\s+{NAME})?)\s+(?P<rest>.+)$", text)) and not (ctx.team and _speakers_news(text)):
        name = m["name"]
        # "Here's …", "Mel's …": a contraction or possessive opens the clause, not a subject.
        contracted = re.search(r"'s$|'re$|'ll$|'ve$|'d$", name.split()[0], re.I)
        if contracted and len(name.split()) == 1 and name.lower().endswith("'s") and (whose := name[:-2]).lower() not in NOT_NAMES \
                and ctx.subject_kinds.get(whose, "person") == "person" and not (ctx.team and singular(whose).lower() in TEAM_THINGS):
            said = len(ctx.facts)
            _possessive(m["rest"], clause, ctx, owner=whose)  # "Ffion's title is Director of Operations": hers, as "my …" is the speaker's
            if len(ctx.facts) > said:
                ctx.subject_kinds.setdefault(whose, "person")
                ctx.last_third_person = whose
                return whose
        if ctx.team and (singular(name.split()[-1]).lower() in TEAM_THINGS or known_function(name) and name.lower() not in ctx.people):
            return None  # "Standup stays in the Harbour room", "Email's moving to Outlook": a team thing or a function, not a person
        if not contracted and name.split()[0].lower() not in NOT_NAMES and not (len(name.split()) > 1 and name.split()[1].lower() in NOT_NAMES):
            if predicate_read(m["rest"], name, clause, ctx, first_person=False, confidence=0.85):
                ctx.last_third_person = name
                ctx.subject_kinds.setdefault(name, "person")
            elif ctx.subject_kinds.get(name, "person") == "person" and re.match(r"(?:moved|relocated|left|joined|joins|went|started|starts|begins|arrives|is|was|has|will|takes|took)\b", m["rest"], re.I):
                ctx.last_third_person = name  # "Priya moved to the publisher's London office; she lives in London now"
            return name
        return None
    if ctx.team and previous_subject in (None, ctx.speaker) and _speakers_news(text):
        # "moved from Toronto to Montréal!", "promoted to staff SRE", "signed a lease on a place in Churchill": a team's
        # chat says the speaker's news without "I"
        predicate_read(_NEW_HOME.sub("moved to ", re.sub(r"^settled in\b", "moved to", text, flags=re.I)), ctx.speaker, clause, ctx, first_person=True)
        return ctx.speaker
    if previous_subject and (m := re.match(r"^(?:based|living|located)\s+in\s+(?P<place>.+)$", text, re.I)):
        place = proper_name(cut_value(m["place"]), clause)  # "I'm the backend person, based in Tbilisi"
        if place:
            fact_add(ctx, clause, previous_subject, "lives_in", place, obj=place, obj_kind="place", confidence=0.8)
        return previous_subject
    if previous_subject and re.match(rf"^{PREDICATE_VERBS}\b", text, re.I):
        # "… and started at Stripe": the subject carries over.
        predicate_read(text, previous_subject, clause, ctx, first_person=previous_subject == ctx.speaker)
        return previous_subject
    return None


# The speaker's home named by where it is: "at our place in Mytholmroyd", "my flat in Leith" (not "my old place in …").
_OUR_HOME = re.compile(rf"\b(?:our|my)\s+(?:new\s+)?{HOME_NOUNS}\s+(?:(?:up|out|down|over)\s+)?in\s+"
                       r"(?P<place>(?-i:[A-Z])[\w'\-]*(?:\s+(?-i:[A-Z])[\w'\-]*){0,2})", re.I)
# The speaker's own news said without "I" in a team's chat ("Moved to Four Corners this weekend!"; capitalised, not a name).
_MOVED = re.compile(r"(?:(?:finally|just|officially)\s+)?(?:moved(?:\s+house)?|relocated|settled|got promoted|promoted)\s+(?:(?:out|over|back)\s+)?(?:from|to|in|into|as|of)\b", re.I)


def _speakers_news(text: str) -> bool:
    """A move or promotion, or a home bought or leased (`rules.places.HOME`), said as the clause's start."""
    return bool(_MOVED.match(text) or HOME.match(text) or _NEW_HOME.match(text) or re.match(HOME_TRIP, text, re.I))


# "new place is in Meanwood" (after "moved out of Headingley at last —"): where the speaker lives now.
_NEW_HOME = re.compile(r"^(?:(?:the|my|our)\s+)?new\s+(?:place|house|home|flat|apartment|pad)\s+is\s+(?:(?:up|out|over|down)\s+)?in\s+(?=[A-Z])", re.I)


# Who runs a team's tools for it ("the uni", "IT", "head office", "the company"), and the switch they make.
_INSTITUTIONS = (r"(?:the\s+)?(?:uni|university|company|firm|school|college|council|trust|hospital|business|board|faculty|department|dept|"
                 r"institute|organi[sz]ation|org|agency|group|practice|clinic|ministry|client|publisher|owners?|management|leadership|"
                 r"head office|hq|(?-i:IT)|it department|it dept|(?-i:ICT)|ops|(?-i:HR)|finance|procurement|facilities|estates|legal)")
_SWITCH_DONE = r"(?:switched|moved|migrated|changed|swapped|transitioned)"
_INSTITUTION_SWITCH = re.compile(
    rf"^(?:{_INSTITUTIONS}\s+(?:(?:has|have|had|finally|now|just|officially)\s+)*(?P<verb>{_SWITCH_DONE})\s+"
    rf"(?:(?P<obj>us|everyone|everybody|the team|all of us|the whole team)\s+)?(?P<tail>.+)|(?P<bare>(?:{_SWITCH_DONE}|moving|switching|migrating)\s+(?:over\s+)?(?:the|our)\s+\S.*\s(?:from|to)\s.+"
    rf"|(?:ditched|dropped|swapped|replaced|swapped out)\s+(?-i:[A-Z])\S*(?:\s+\S+){{0,3}}?\s+(?:for|with)\s+(?-i:[A-Z]).+))$",
    re.I,
)
_PERSON_SWITCH = re.compile(
    rf"^(?P<who>{NAME})(?:'s|\s+(?:has|have|had|is))?\s+(?:(?:finally|now|just|officially)\s+)*{_SWITCH_DONE}\s+"
    r"(?:us|everyone|everybody|all of us|the (?:whole\s+)?(?:team|practice|shop|office|company|firm|staff))\s+(?:over\s+)?(?P<tail>(?:from|to)\s.+)$",
)
_CLEFT = re.compile(r"^(?P<x>.+?)\s+(?:is|was|are|has been)\s+what\s+(?P<rest>(?:we|i|the team|our team)\s+.+)$", re.I)
_CLEFT_REST = re.compile(r"^(?P<subj>we|i|the team|our team)\s+(?P<verb>(?:\w+\s+){0,2}?\w+)\s+(?P<prep>for|on|in|with|to|as)\b(?P<tail>.*)$", re.I)
_INTRO = re.compile(rf"^(?:(?:i am|this is|it is)\s+(?P<name>{NAME})|(?P<name2>{NAME})(?P<here>\s+here)?)\s*,\s*(?P<rest>.+)$", re.I)


def _introduction(text: str, clause: Clause, ctx: Context) -> bool:
    """A speaker introducing themself with appositions: "I'm Priyanka, the new engineering
    manager, based in Pune", "Greta, head of design, in Copenhagen", "Carmen here, Android
    engineer, living in Zaragoza": each apposition is a fact of the speaker (a role, a home)."""
    m = _INTRO.match(text)
    if not m:
        return False
    name = m["name"] or m["name2"]
    if m["name2"] and not m["here"] and name.casefold() != ctx.speaker.casefold():
        return False  # "Greta, …" said by someone else is an address, not an introduction
    found = False
    for part in re.split(r"\s*,\s*|\s+and\s+", m["rest"]):
        part = part.strip(" .")
        if where := re.match(r"^(?:(?:based|living|located|settled|working)\s+)?(?:in|from)\s+(?P<place>.+)$", part, re.I):
            place = proper_name(cut_value(where["place"]), clause)
            if place and not part.lower().startswith("from"):
                fact_add(ctx, clause, ctx.speaker, "lives_in", place, obj=place, obj_kind="place", confidence=0.8)
                found = True
        elif re.match(r"^i\s", part, re.I):
            found = predicate_read(part[2:], ctx.speaker, clause, ctx, first_person=True) or found
        elif role := job_title(part, strict=True) or (job_title(part) if re.match(r"^(?:the\s+)?(?:head|director|vp|lead|manager)\s+of\s+\w", part, re.I) else None):
            fact_add(ctx, clause, ctx.speaker, "role", role, confidence=0.8)
            found = True
    return found


def _possessive(rest: str, clause: Clause, ctx: Context, *, owner: str | None = None) -> None:
    """Clauses starting with "my" (or "<owner>'s": "Ffion's title is …", "Nadia's cat is called Miso"): relations,
    pets, and "my X is Y" details of the speaker (of `owner`)."""
    me = owner or ctx.speaker
    rest = re.sub(r"^(\w+(?:\s+\w+)?)\s+is\s+(?:now|still)\s+", r"\1 is ", rest, count=1)  # "my manager is now Greta"
    # "my manager changed from Priya to Greta"
    if m := re.match(rf"^(?:new\s+)?(?:line\s+)?(?:manager|boss|supervisor|lead)\s+(?:has\s+)?(?:changed|switched|went)\s+from\s+(?P<a>{NAME})\s+to\s+(?P<b>{NAME})$", rest, re.I):
        fact_add(ctx, clause, me, "reports_to", m["b"], obj=m["b"], obj_kind="person", previous=m["a"])
        ctx.subject_kinds.setdefault(m["b"], "person")
        return
    # "my dog Rex", "my dog's name is Rex", "my cat is called Miso"
    if m := re.match(
        rf"^(?:(?:new|little|old|sweet|cute)\s+)?(?P<kind>{PET_RE})"
        rf"(?P<called>'s name is|\s+is named|\s+is called|\s+named|\s+called|,)?\s+(?P<name>{NAME}|(?-i:[a-z]{{3,}}))\b(?P<rest>.*)$",
        rest,
        re.I,
    ):
        if (m["name"][:1].isupper() and proper_name(m["name"], clause, name=True)) \
                or pet_named_in_lowercase(m["name"], m["rest"], clause, called=bool((m["called"] or "").strip(" ,"))):
            pet = PETS[m["kind"].lower()]
            fact_add(ctx, clause, me, "has_pet", m["name"], obj=m["name"], obj_kind="other", sentence=f"{me} has a {pet} named {m['name']}.")
            ctx.subject_kinds.setdefault(m["name"], "other")
            if m["rest"].strip():
                predicate_read(m["rest"].strip(), m["name"], clause, ctx, first_person=False, confidence=0.8)
            return
    # "my cats are called Miso and Tofu", "my dogs, Rex and Bella": each one a pet
    if m := re.match(rf"^(?:(?:two|three|four|little|old)\s+)?(?P<kind>{PET_RE})s(?:\s+are\s+(?:called|named)|,)?\s+"
                     rf"(?P<names>{NAME}(?:(?:,\s*|\s+and\s+|\s*&\s*){NAME})+)\s*$", rest, re.I):
        names = [n for n in re.split(r",\s*(?:and\s+)?|\s+and\s+|\s*&\s*", m["names"]) if proper_name(n, clause, name=True)]
        pet = PETS[m["kind"].lower()]
        for name in names[:4]:
            fact_add(ctx, clause, me, "has_pet", name, obj=name, obj_kind="other", sentence=f"{me} has a {pet} named {name}.")
            ctx.subject_kinds.setdefault(name, "other")
        if names:
            return
    # "my sister Anna (lives in Berlin)", "my wife is Maria", "my brother's name is Tom"
    if m := re.match(
        rf"^(?:(?:older|younger|little|big|baby|twin|eldest|oldest|youngest|step-?)\s*)?(?P<rel>{RELATION_RE})"
        rf"(?:'s name is|\s+is named|\s+is called|\s+is|\s+named|\s+called|,)?\s+"
        rf"(?P<name>{NAME}(?:\s+{NAME})?)\b(?P<rest>.*)$",
        rest,
        re.I,
    ):
        name = m["name"]
        if proper_name(name, clause, name=True) and name.split()[0].lower() not in NOT_NAMES:
            attribute, word = RELATIONS[m["rel"].lower()]
            fact_add(ctx, clause, me, attribute, name, obj=name, obj_kind="person", sentence=relation_sentence(me, attribute, word, name))
            ctx.subject_kinds.setdefault(name, "person")
            ctx.last_third_person = name
            tail = m["rest"].strip(" ,")
            if tail:
                predicate_read(tail, name, clause, ctx, first_person=False, confidence=0.8)
            return
    # "my job is software engineer", "my company is Acme"
    if m := re.match(r"^(?:new\s+|current\s+)?(?:job|position|role|job title|title)\s+is\s+(?P<role>.+)$", rest, re.I):
        role = job_title(m["role"], strict=True)
        if role:
            fact_add(ctx, clause, me, "role", role)
        return
    if m := re.match(r"^(?:new\s+|current\s+)?(?:company|employer)\s+is\s+(?P<org>.+)$", rest, re.I):
        org = proper_name(cut_value(m["org"]), clause)
        if org:
            fact_add(ctx, clause, me, "works_at", org, obj=org, obj_kind="organization")
        return
    # "my favorite color is blue", "my email is ann@example.com"
    if m := re.match(r"^(?P<what>[a-z][a-z\- ]{1,40}?)\s+(?:is|are)\s+(?P<value>.+)$", rest, re.I):
        attribute = _detail_attribute(m["what"])
        if attribute:
            value = m["value"].strip().rstrip(".")
            if attribute not in {"email"}:
                value = plain_value(value, max_words=8)
            if value:
                fact_add(ctx, clause, me, attribute, value)


_DETAILS = {
    "name": "name", "full name": "name", "first name": "first_name", "last name": "last_name", "surname": "last_name",
    "middle name": "middle_name", "nickname": "nickname", "email": "email", "email address": "email",
    "e-mail": "email", "e-mail address": "email", "phone": "phone", "phone number": "phone", "number": "phone",
    "cell": "phone", "cell number": "phone", "mobile": "phone", "mobile number": "phone", "birthday": "birthday",
    "date of birth": "birth_date", "address": "address", "home address": "address", "hometown": "hometown",
    "home town": "hometown", "username": "username", "handle": "username", "blood type": "blood_type",
    "zodiac sign": "zodiac_sign", "star sign": "zodiac_sign", "major": "major", "native language": "native_language",
    "first language": "native_language", "mother tongue": "native_language", "religion": "religion",
    "diet": "diet", "website": "website", "github": "github", "age": "age", "height": "height",
}  # fmt: skip


def _detail_attribute(what: str) -> str | None:
    what = " ".join(what.lower().split())
    if m := re.match(r"^(?:all-time\s+|absolute\s+)?favou?rite\s+([a-z]+(?:\s+[a-z]+)?)$", what):
        return f"favorite_{snake_case(m[1])}"
    return _DETAILS.get(what)
