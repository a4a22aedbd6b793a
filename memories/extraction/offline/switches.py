"""A team's switch of tool or supplier said in chat's own shape, read from the whole statement rather than
from one clause's grammar.

Chat says a switch in many ways no clause rule reads: "ditched mailchimp, newsletter goes out on klaviyo
from now on", "trello is dead, long live asana", "bye BSG 👋 all our hops come from yakima chief going
forward", "expensify is gone, we're on ramp now". What they share is their shape: one name said gone
(ditched, dropped, cancelled, dead, switched off, bye, no more, moving off, instead of) beside one said to be
current (switched / moved / gone over to, onto, we're on, is live, long live, from now on, going forward,
signed with, comes from). A name here is its slot's words, typed in any case: "square gets switched off"
names Square, although "square" is an English word. A described thing ("the old spot by the library") is
no name: a slot that opens with an article or possessive and holds only English words is not read.

The function comes from the statement when it says one ("for route planning", "all our can labels",
"base malt comes from …", "the webshop's on shopify", a label before a colon); without one, the switch is
a replacement of the gone tool (`REPLACEMENT_ATTRIBUTE`), placed on the old tool's attribute when the
memory holds it. A current name with no gone one is read only with a function and an explicit switch verb
("switched to circuit for route planning"). Read in a team's scope only, and only for a statement the
clause rules gave no tool, use or place of."""

import re
from dataclasses import replace
from datetime import datetime
from itertools import takewhile

from memories.extraction.offline.context import Context
from memories.extraction.offline.dates import MONTHS, month_number, take_dates
from memories.extraction.offline.gazetteer import known_place
from memories.extraction.offline.predicates import TIME_OR_WISH
from memories.extraction.offline.rules.team import FIRM_WORDS, function_ok, known_function, topic_function
from memories.extraction.offline.truecase import english
from memories.extraction.offline.words import JOBS, NOT_NAMES, RELATIONS
from memories.extraction.schemas import ExtractedFact
from memories.extraction.vocabulary import REPLACEMENT_ATTRIBUTE, TOOL_WORDS, function_key, tool_attribute

_NAME_WORD = r"\w(?:[\w&+'\-]|\.(?=\w))*"
_AFTER = rf"(?P<name>{_NAME_WORD}(?:\s+{_NAME_WORD}){{0,3}})"  # a name after its marker: cut at its first stop word
_BEFORE = rf"(?P<name>(?:{_NAME_WORD}\s+){{0,2}}{_NAME_WORD})"  # a name before its marker: cut back to the last stop word

# A name said gone.
_GONE_AFTER = re.compile(
    r"\b(?:ditch(?:ed|ing)?|dropp(?:ed|ing)|dump(?:ed|ing)|binn(?:ed|ing)|scrapp(?:ed|ing)|cancel(?:l?ed|l?ing)|"
    r"bye(?:\s+bye)?|goodbye|farewell(?:\s+to)?|rip|so long|moving off|moved off|move off|mov(?:ed|ing) away from|"
    r"off of|instead of|got rid of|getting rid of|get rid of|done with|finished with|switch(?:ed|ing)? off|turn(?:ed|ing)? off|"
    rf"shut(?:ting)? down|retir(?:ed|ing))\s+(?:the\s+|our\s+)?{_AFTER}", re.I)
_GONE_BEFORE = re.compile(
    rf"(?:^|[^\w'])(?:the\s+|our\s+)?{_BEFORE}(?:(?:'s|\s+(?:is|are|was|were|has been|have been))\s+(?:now\s+|officially\s+|definitely\s+)?out\b|"
    r"(?:'s|\s+(?:is|are|was|were|has been|have been|got|gets|will be|'ll be|is being|are being|goes|go|went|is going|are going|'s going))?\s+"
    r"(?:now\s+|officially\s+|finally\s+|being\s+|well and truly\s+)?(?:gone|dead|cancell?ed|canceled|switched off|turned off|shut down|"
    r"retired|read-only|read only|history|binned|ditched|dropped|closed|decommissioned|discontinued|disabled|no more|the old one|was the old|"
    r"stops|stop|stopped|ends|ended|closes|closing|phased out|being phased out|on (?:the|its|their) way out))\b", re.I)
# A name whose contract ends, or that is being left or replaced: "the sumup contract is up", "sparkle's contract isn't being
# renewed", "we're leaving peninsula", "provet cloud is replacing rxworks".
_ENDING = re.compile(
    rf"(?:^|[^\w'])(?:the\s+|our\s+)?{_BEFORE}(?:'s)?\s+(?:contract|subscription|licen[cs]e|lease|account|deal)\s+"
    r"(?:is up|is ending|ends|ended|has ended|expires|expired|is expiring|runs out|ran out|is running out|"
    r"(?:is|was)(?:n't|\s+not)\s+(?:being\s+)?renewed|(?:won't|will not)\s+be\s+renewed)\b", re.I)
_ENDING_WITH = re.compile(r"\b(?:contract|subscription|licen[cs]e|lease|account|deal)\s+with\s+(?:the\s+)?" + _AFTER.replace(r"{0,3}", r"{0,2}")
                          + r"\s+(?:has\s+)?(?:ended|ends|is ending|is up|expires|expired|runs out|ran out|has run out|is over)\b", re.I)
_LEAVING = re.compile(r"\b(?:we're|we've|we are|we have|we|we'll be|we will be|we're going to be|we are going to be)\s+(?:now\s+|finally\s+|officially\s+)?(?:leaving|left)\s+"
                      rf"(?:the\s+|our\s+)?{_AFTER}", re.I)
# "… is replacing rxworks", "it replaced circleci", "1password has replaced lastpass", "axiell will replace modes", "we're
# replacing the motorolas with …": the name after a replacing verb in the active voice (not "replaced by", "replaced with").
_REPLACED_BY = re.compile(r"\b(?:(?:is|are)\s+(?:now\s+)?replacing|replac(?:ed|es|ing)|(?:has|have|had|will|'ll|to|gonna)\s+(?:now\s+|finally\s+)?replace[ds]?)"
                          rf"\s+(?!by\b|with\b)(?:the\s+|our\s+)?{_AFTER}", re.I)
# "no more X" says a habit ended as often as a tool ("no more paper timesheets"): read only of a name said as one.
_NO_MORE = re.compile(rf"\bno more\s+{_AFTER}", re.I)
# A name said current.
_NEW_AFTER = re.compile(
    r"\b(?:(?:switch|swapp|migrat|mov|chang|transition)(?:ed|ing|e|es)?|swap|gone|went|going|go)\s+(?:(?:over|across|everything|it|us|all|back)\s+){0,2}"
    r"(?:to|onto)\s+(?:the\s+|our\s+)?" + _AFTER
    + r"|\bonto\s+" + _AFTER.replace("name", "name2")
    + r"|\b(?:we're|we are|we've been|we have been|everything's|everything is|it's all|all|now)\s+(?:all\s+)?on\s+" + _AFTER.replace("name", "name3")
    + r"|\b(?:signed(?:\s+up)?\s+with|going with|went with|gone with|long live|sticking with|using|use|hello)\s+" + _AFTER.replace("name", "name4")
    + r"|\bit's\s+" + _AFTER.replace("name", "name5") + r"\s+now\b"
    + r"|\b(?:comes?|go(?:es)?(?:\s+out)?|going out|runs?|done|handled|sent|sorted|monitored|managed|hosted|supplied|serviced|provided|powered|covered|"
    r"logs?|logging|logged)\s+(?:now\s+)?(?:from|through|via|on|by|with|to)\s+(?:the\s+|our\s+)?" + _AFTER.replace("name", "name6")
    # "everything's logged in safetyculture now", "meeting notes go back into google drive" (not "lives in", "kept in": a thing's place)
    + r"|\b(?:logged|tracked|recorded|booked|go(?:es)?|going|went)\s+(?:back\s+)?(?:in|into)\s+(?:the\s+|our\s+)?" + _AFTER.replace("name", "name7")
    # "timesheets are in synergy from today", "everything's on teams now": a name the things are in, with a time after it
    + r"|\b(?:is|are|'s|'re)\s+(?:now\s+|all\s+)?(?:in|on)\s+" + _AFTER.replace("name", "name8") + r"(?=\s+(?:now|from|as of|going forward|these days)\b)"
    # "new office cleaners are brightway", "our new timber supplier is jewson"
    + r"|\bnew\s+[a-z][\w\-]*(?:\s+[a-z][\w\-]*){0,2}?\s+(?:is|are|will be)\s+(?:now\s+)?" + _AFTER.replace("name", "name9"),
    re.I)
_NEW_BEFORE = re.compile(
    rf"(?:^|[^\w'])(?:the\s+|our\s+)?{_BEFORE}(?:(?:'s|\s+(?:is|are|went|has gone|have gone|has been|have been))\s+(?:now\s+|officially\s+|finally\s+)?live\b|"
    r"\s+live\s+(?=from\b|as of\b|today\b|now\b))"
    rf"|(?:^|[^\w'])(?:the\s+|our\s+)?{_BEFORE.replace('name', 'name2')}\s+(?:now\s+)?(?:does|do|is doing|are doing|handles|handle|supplies|supply|makes|make|prints|print|"
    r"services|service|monitors|monitor|hosts|host|cleans|clean|manages|manage|covers|cover)\s+"
    r"(?:all\s+|all\s+of\s+|most\s+of\s+)?(?:our|the|both|all)\s+(?P<does>[a-z][\w\-]*(?:\s+[a-z][\w\-]*){0,2})"
    rf"|(?:^|[^\w'])(?:the\s+|our\s+)?{_BEFORE.replace('name', 'name3')}\s+(?:from now on|going forward|from here on(?: in)?|as of today|from today)\b"
    # "sharpsmart are taking over", "croner is our HR advice service", "provet cloud is replacing rxworks"
    rf"|(?:^|[^\w'])(?:the\s+|our\s+)?{_BEFORE.replace('name', 'name4')}\s+(?:is|are)\s+(?:now\s+)?(?:taking over|replacing)\b"
    rf"|(?:^|[^\w'])(?:the\s+|our\s+)?{_BEFORE.replace('name', 'name5')}\s+(?:takes over|take over|replaces)\b"
    rf"|(?:^|[^\w'])(?:the\s+|our\s+)?{_BEFORE.replace('name', 'name6')}\s+(?:is|are)\s+(?:now\s+)?our\s+(?:new\s+)?(?P<ours>[a-z][\w\-]*(?:\s+[a-z][\w\-]*){{0,3}})",
    re.I)
# "dropbox → egnyte migration this weekend", "1Password -> Bitwarden for the team vault"
_ARROW = re.compile(rf"(?:^|[^\w'])(?P<old>(?:{_NAME_WORD}\s+){{0,2}}{_NAME_WORD})\s*(?:→|->|=>|⇒|➡️?)\s*" + _AFTER)
# A switch from one name to another.
_FROM_TO = re.compile(
    r"\b(?:switch|swapp|swap|migrat|mov|chang|transition)\w*\s+(?P<fn>(?:[\w'\-]+\s+){0,3}?)(?:from|off(?:\s+of)?|out\s+of)\s+(?:the\s+|our\s+)?(?P<old>[\w][\w.&+'\-]*(?:\s+[\w][\w.&+'\-]*){0,2}?)\s+"
    r"(?:to|onto|over to|into|in to)\s+(?:the\s+|our\s+)?" + _AFTER, re.I)

# A switch of a thing named by its function: "we're moving set drawings to vectorworks", "migrated the wiki over to notion".
_MOVED_TO = re.compile(r"\b(?:switch|migrat|mov)(?:ed|ing|e|es)?\s+(?:the\s+|our\s+|all\s+(?:the\s+|our\s+)?)?(?P<fn>[a-z][\w'\-]*(?:\s+[a-z][\w'\-]*){0,2}?)\s+"
                       r"(?:over\s+|across\s+)?(?:to|onto|into)\s+(?:the\s+|our\s+)?" + _AFTER, re.I)

# Words that make a name alone a switch, with a function said ("switched to circuit for route planning").
_SWITCH_SAID = re.compile(r"\bnew\s+[a-z][\w\-]*(?:\s+[a-z][\w\-]*){0,2}?\s+(?:is|are)\b|\b(?:switch\w*|swapp\w*|swap|migrat\w*|(?:moved|gone|went|going) over|from now on|going forward|as of today|from today|"
                          r"(?:is|went|gone) live|long live|signed|now)\b", re.I)

_SWITCHED = re.compile(r"\b(?:switch\w*|swapp\w*|swap|migrat\w*|ditch\w*|dropp\w*|cancel\w*|replac\w*)\b", re.I)

# A switch under way or ahead, not done: "we're moving …", "switching payroll to …", "we'll move to clickup".
_UNDER_WAY = re.compile(r"\b(?:moving|switching|migrating|changing|swapping|transitioning|going over|going across)\b"
                        r"|(?:\bwill|'ll|\bgoing to|\bgonna)\s+(?:\w+\s+)?(?:move|switch|migrate|change|swap|go)\b", re.I)

# "we're leaving donorfy for beacon", "ditched premiere for resolve": both ends, the new one after "for".
_FOR_PAIR = re.compile(r"(?:\bwe(?:'re|'ve| are| have)?\s+(?:\w+\s+)?(?:leaving|left)|\b(?:ditch(?:ed|ing)?|dropp(?:ed|ing)|dump(?:ed|ing)|swapp(?:ed|ing)|swap|"
                       r"trad(?:ed|ing)|trade))\s+(?:the\s+|our\s+)?(?P<old>\w[\w.&+'\-]*(?:\s+\w[\w.&+'\-]*){0,2}?)\s+(?:out\s+)?(?:for|with)\s+(?:the\s+|our\s+)?"
                       + _AFTER, re.I)

# A replacement said with both ends by its verb, the gone one first: "the tilts are being replaced by brewblox", "epos now is being
# swapped for lightspeed" (the passive voice), and "we're replacing the motorola walkie-talkies with clear-com", "swapped launchdarkly
# out for unleash" (the doer's). The new one first: "1password has replaced lastpass", "axiell will replace modes".
_OLD_THEN_NEW = re.compile(
    rf"(?:^|[^\w'])(?:the\s+|our\s+)?(?P<old>(?:{_NAME_WORD}\s+){{0,2}}{_NAME_WORD})\s+(?:is|are|was|were|has been|have been|will be|'ll be|gets|get|got|"
    r"getting)\s+(?:now\s+|being\s+|finally\s+)*(?:replaced|swapped(?:\s+out)?|switched(?:\s+out)?|superseded)\s+(?:by|for|with)\s+"
    r"(?:the\s+|our\s+|an?\s+)?" + _AFTER
    + r"|\b(?:replac(?:e|es|ed|ing)|swapp(?:ed|ing)|swaps?)\s+(?:out\s+)?(?:the\s+|our\s+)?(?P<old2>\w[\w.&+'\-]*(?:\s+\w[\w.&+'\-]*){0,2}?)\s+(?:out\s+)?"
    r"(?:with|for)\s+(?:the\s+|our\s+|an?\s+)?" + _AFTER.replace("name", "name2"), re.I)
_NEW_THEN_OLD = re.compile(
    rf"(?:^|[^\w'])(?:the\s+|our\s+)?(?P<new>(?:{_NAME_WORD}\s+){{0,2}}{_NAME_WORD})\s+(?:(?:has|have|had|will|'ll|is going to|are going to|is set to|are set to)\s+)?"
    r"(?:now\s+|finally\s+|officially\s+)?(?:replaced|replaces|replace|(?:is|are)\s+(?:now\s+)?replacing)\s+(?!by\b|with\b)(?:the\s+|our\s+)?" + _AFTER, re.I)


def _replacing_pair(text: str, ctx: Context) -> tuple[str, str] | None:
    """The (old, new) a replacing verb names both of, or None."""
    if m := _OLD_THEN_NEW.search(text):
        if m["old"]:
            old, new = _name(m["old"], ctx, backwards=True), _name(m["name"], ctx)
        else:
            old, new = _name(m["old2"], ctx, whole=True), _name(m["name2"], ctx)
    elif m := _NEW_THEN_OLD.search(text):
        old, new = _name(m["name"], ctx), _name(m["new"], ctx, backwards=True)
    else:
        return None
    return (old, new) if old and new and old.casefold() != new.casefold() else None


# Where a name stops: words that are no part of one.
_STOP = frozenset(
    "for from to now instead as is are was were be been being has have had on going today tonight tomorrow this next last and but so "
    "then too also because cos coz since after before in at by with til till until which who that it its we i you they our all any "
    "every each of the a an or if when where while just still already again anymore any more yet soon finally officially "
    "please pls thanks ta lol haha btw fyi though tho either neither nor about around over into onto off out up down "
    "will would can could should shall may might must do does did doing done get gets got very really much more most".split()
)
# Where a function's words stop ("all our can labels now").
_FN_STOP = frozenset("now from to for as by today tonight tomorrow this next and but so going with at in on too also because since "
                     "til till until which who that it we i you they instead anymore again please thanks".split())
# Events and rooms are places' and dates' business, not a function a tool serves.
_EVENTS = frozenset("offsite off-site onsite standup stand-up standups retro retros retrospective meeting meetings sync all-hands kickoff "
                    "hackathon summit conference party dinner lunch office offices hq headquarters stall market venue venues location place spot "
                    "room site".split())
_ACCOUNTS = frozenset("page account accounts workspace licence license licences licenses subscription subscriptions instance group board "
                      "contract site server box plan app file files sheet sheets project projects job jobs email emails order orders form forms".split())
# Labels and subjects that name no function ("Good news: …", "the uni is switching …").
_NO_FUNCTIONS = frozenset("long good great bad big exciting sad happy quick small important random fun uni university company council "
                          "everyone team staff practice firm business organisation organization org group department dept studio shop store club charity trust".split())
# Words that say a firm serves the team, not what for: "supplier" alone is no function.
_GENERIC = frozenset("supplier suppliers provider providers vendor vendors company companies contractor contractors service services "
                     "partner partners firm firms".split())
_LINKS = frozenset("is are was were has have been got gets will be being goes go went going live now officially finally stays stay remains remain".split())
# Slots that name no tool: pronouns, people, times.
_NOT_A_NAME = frozenset(
    "it this that these those them they us we me you him her we've we're we'd we'll i've i'm i'd i'll you've you're they've they're "
    "it's that's he's she's everything everyone everybody anyone nothing something "
    "one ones thing things stuff way idea plan lot bit day days week weeks weekend month months year years morning mornings "
    "afternoon evening evenings night nights hour hours time times today tomorrow yesterday tonight here there home work "
    "monday mondays tuesday tuesdays wednesday wednesdays thursday thursdays friday fridays saturday saturdays sunday sundays "
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec spring summer autumn fall winter christmas easter "
    "track holiday leave break lunch sick board pause hold".split()
)
_DETERMINERS = frozenset("the our a an my his her their your its this that those these some new old".split())


def _cut(words: list[str], *, backwards: bool) -> tuple[list[str], str]:
    """The name's words, up to a stop word (after a marker) or back to one (before it), and that stop word."""
    out: list[str] = []
    if backwards and "for" in (lowered := [w.lower() for w in words])[1:]:
        words = words[: lowered.index("for", 1)]  # "brightpay for payroll going forward"
    while backwards and words and (words[-1].lower() in _LINKS or words[-1].lower() in _ACCOUNTS and not words[-1][:1].isupper()):
        words = words[:-1]  # "squarespace is cancelled", "the quickbooks subscription is cancelled": the verb or account after the name
        # (an account word typed with a capital is the name's own: "Google Forms is retired")
    for word in reversed(words) if backwards else words:
        bare = word.lower().removesuffix("'s")
        if bare in _STOP:
            return (list(reversed(out)) if backwards else out), bare
        out.append(word.removesuffix("'s") if not backwards or not out else word)
        if word.lower().endswith("'s") and not backwards:
            break  # "webshop's on shopify": a possessive ends the name
    return (list(reversed(out)) if backwards else out), ""


def _capitals_kept(words: list[str]) -> list[str]:
    """A name said with capitals ends at its first lowercase word: "Agresso paper forms", "Jenkins job" name Agresso, Jenkins."""
    for i, word in enumerate(words):
        if word[:1].isupper() or word[:1].isdigit():
            end = i + 1
            while end < len(words) and (words[end][:1].isupper() or words[end][:1].isdigit()):
                end += 1
            return words[:end]
    return words


def _name(said: str | None, ctx: Context, *, backwards: bool = False, described: bool = False, whole: bool = False) -> str | None:
    """A tool's name as its slot said it, or None when the slot holds a description, a person or a time. `whole`: the
    slot is delimited on both sides ("from Vets Now to …"), so a stop word inside it is part of the name."""
    if not said:
        return None
    if whole:
        words, stop = list(takewhile(lambda w: w.lower() not in {"in", "at", "on", "for"}, said.split())), ""
    else:
        words, stop = _cut(said.split(), backwards=backwards)
    if backwards and stop in {"at", "in", "to", "by", "near"}:
        return None  # "at harmon square from now on": a place
    described = described or stop in _DETERMINERS
    while words and words[0].lower() in _DETERMINERS:
        words, described = words[1:], True
    words = [w.strip(".,;:!?\"'()") for w in words]
    words = [w for w in words if w]
    if words and _a_job(words[-1]):
        return None  # "our Wells Fargo business banker retired": a person in a job, not a tool
    words = _capitals_kept(words)
    if not words or len(words) > 3:
        return None
    lowered = [w.lower() for w in words]
    if (len(words) == 1 and lowered[0] in NOT_NAMES) or any(w.removesuffix("'s") in ctx.people for w in lowered) or any(w in _NOT_A_NAME for w in lowered) or all(w.isdigit() for w in lowered):
        return None
    if ctx.team and " ".join(lowered) == ctx.team.lower():
        return None
    if not re.search(r"[a-z]", " ".join(lowered)):
        return None
    if described and not any(w[:1].isupper() for w in words) and all(english(w) for w in lowered if w.isalpha()):
        return None  # "the old boiler room", "the ball"
    return " ".join(w if any(c.isupper() for c in w) else w[:1].upper() + w[1:] for w in words)


def _names(pattern: re.Pattern, text: str, ctx: Context, *, backwards: bool) -> list[str]:
    out = []
    for m in pattern.finditer(text):
        group = next((k for k, v in m.groupdict().items() if k.startswith("name") and v), None)
        if group is None:
            continue
        before = text[max(0, m.start(group) - 8):m.start(group)].lower()
        described = bool(re.search(r"\b(?:the|our|my|a|an)\s+$", before))
        if (name := _name(m[group], ctx, backwards=backwards, described=described)) and name.casefold() not in {n.casefold() for n in out}:
            if group == "name9" and not _typed_as_name(name, text):
                continue  # "new rib is ordered": a new thing's state, not its name
            out.append(name)
    return out


def _function(text: str, new: str, names: set[str], ctx: Context, topic: str | None, *, said: str = "") -> str | None:
    """The function a switch serves, as the statement says it."""
    def cut(fn: str) -> str:
        words = []
        for word in fn.split():
            if word.lower() in _FN_STOP:
                break
            words.append(word)
        return " ".join(words)

    def usable(fn: str | None, *, unknown_named: bool = False) -> str | None:
        """`fn` as a function's words, or None. `unknown_named`: a word no vocabulary holds is a name ("the gitlab ci pipelines")."""
        if not fn:
            return None
        # a name is no function: "NTA is switching …", "the GitLab CI pipelines" (but "CI" is one)
        words = [w for w in fn.replace("'s", "").split() if w.lower() not in _DETERMINERS
                 and (known_function(w) or english(w.lower()) or not (w != w.lower() or unknown_named and w.isalpha()))]
        words = [w.lower() for w in words]
        fn = " ".join(words)
        if not words or not function_ok(fn) or any(w in _NOT_A_NAME or w in ctx.people or w in _FN_STOP or w in RELATIONS for w in words):
            return None
        if fn.casefold() in names or words[-1] in _EVENTS or not function_key(fn) or (len(words) == 1 and words[0] in _NO_FUNCTIONS | _GENERIC):
            return None  # (a qualifier dropped as a name leaves "supplier" of "CO2 supplier": no function of its own)
        return fn

    if said and (fn := usable(cut(said))):
        return fn  # "switching CO2 supplier from airgas to linde"
    lowered = text.lower()
    at = lowered.find(new.lower())
    after = lowered[at + len(new):] if at >= 0 else ""
    if topic and (fn := usable(topic_function(topic, people=ctx.people))):
        return fn  # "Expense claims: the uni is switching from Agresso to Concur"
    # "newsletter goes out on klaviyo", "base malt comes from …", "webshop's on shopify", "email's moving off godaddy"
    for piece in re.split(r"[.;!?,:—–]|\s-\s|\band\b|\bbut\b|\bso\b", text):
        if new.casefold() not in piece.casefold():
            continue
        m = re.match(r"\s*(?:(?:also|and|so|plus|btw|fyi)\s+)?(?:(?:the|our|all|all our|all the)\s+)?(?P<fn>[a-z][\w\-]*(?:\s+[a-z][\w\-]*){0,2}?)(?:'s|\s+(?:(?:has|have|had|is|are|was|were|will)\s+)?(?:now\s+)?(?:is|are|goes|go|comes|come|runs|run|"
                     r"will|move|moves|moved|moving|switches|switched|switching|lives|live|done))\b", piece, re.I)
        if m and (fn := usable(m["fn"])) and fn.split()[0] not in {"we", "i", "it", "everything", "that", "this", "there"}:
            return fn
    if m := re.match(r"\s+(?:is|are)\s+(?:now\s+)?our\s+(?:new\s+)?(?P<fn>[a-z][\w\-]*(?:\s+[a-z][\w\-]*){0,2})", after, re.I):
        if fn := usable(cut(m["fn"])):
            return fn  # "croner is our HR advice service from 1 april"
    if m := re.match(r"\s+(?:now\s+)?for\s+(?:the\s+|our\s+|all\s+(?:the\s+|our\s+)?)?(?P<fn>[a-z][\w\-]*(?:\s+[a-z][\w\-]*){0,2})", after):
        fn = cut(m["fn"])
        if usable(fn):
            return usable(fn)
    if m := re.search(r"(?:does|do|is doing|are doing|handles|handle|supplies|supply|makes|make|prints|print)\s+(?:all\s+|all\s+of\s+|most\s+of\s+)?"
                      r"(?:our|the)\s+(?P<fn>[a-z][\w\-]*(?:\s+[a-z][\w\-]*){0,2})", after):
        fn = cut(m["fn"])
        if usable(fn):
            return usable(fn)
    # "the payments app", "our CI": a known function named anywhere (not a name with "app" after it: "the square app")
    for m in re.finditer(r"\b(?:our|the)\s+(?P<fn>[a-z][\w\-]*(?:\s+[a-z][\w\-]*){0,2})", text, re.I):
        words = cut(m["fn"]).split()
        while words:
            plain = [w.lower() for w in words if w.lower() not in TOOL_WORDS]
            if plain and known_function(" ".join(plain)) and (fn := usable(" ".join(words), unknown_named=True)):
                return fn
            words = words[:-1]
    return None


def _typed_as_name(name: str, text: str) -> bool:
    """Whether the whole message, as typed, says `name` as a name (`values.said_as_name` asks it of one clause's value):
    with a capital, a digit or a dot ("smile.io"), or a word no English vocabulary holds ("mailchimp"); "square" and "five star" are read as names only where a function says what they are."""
    m = re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text, re.I)
    said = m.group(0) if m else name
    return any(c.isupper() for c in said) or bool(re.search(r"\d|\.\w", said)) or any(not english(w) for w in said.lower().split() if w.isalpha())


_DAY_MONTH = re.compile(rf"\b(?:the\s+)?(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m>{MONTHS})\b(?!\.?,?\s+\d{{4}})"
                        rf"|\b(?P<m2>{MONTHS})\.?\s+(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?\b(?!,?\s+\d{{4}})", re.I)


def _when(text: str, ctx: Context) -> datetime | None:
    """When the switch is said to happen: a date phrase of the statement's ("from November", "last week"), or a day of a
    month without its year ("on 1 November"), taken in the year that puts it nearest to when it was said."""
    if m := _DAY_MONTH.search(text):
        day, month = int(m["d"] or m["d2"]), month_number(m["m"] or m["m2"])
        said = ctx.occurred_at
        days = []
        for year in (said.year - 1, said.year, said.year + 1):
            try:
                days.append(datetime(year, month, day, tzinfo=said.tzinfo))
            except ValueError:
                continue
        if days:
            return min(days, key=lambda d: abs(d - said))
    return take_dates(text, replace(ctx, event_at=None, facts=[]))[1]


def _a_job(word: str) -> bool:
    """Whether a word names a job, in the singular or the plural ("banker", "accountants")."""
    word = word.lower()
    return word in JOBS or word.rstrip("s") in JOBS or word.removesuffix("s") in JOBS


def _person_in_a_role(name: str, text: str) -> bool:
    """Whether `text` says `name`, typed as a person's name is (one or two capitalised words, none a firm's), is "our"
    something a person is ("Ruben is now our tech lead"; not "Hagen & Co are our accountants", "croner is our HR advice
    service")."""
    said = re.search(rf"(?<!\w)(?P<name>{re.escape(name)})\s+(?:is|are)\s+(?:now\s+)?our\s+(?:new\s+)?(?P<role>[a-z][\w\- ]*)", text, re.I)
    if said is None:  # "Felix's new manager is Oskar": the role before the name
        said = re.search(rf"\bnew\s+(?P<role>[a-z][\w\-]*(?:\s+[a-z][\w\-]*){{0,2}}?)\s+(?:is|are|will be)\s+(?:now\s+)?(?P<name>{re.escape(name)})(?!\w)", text, re.I)
        if said is not None:
            return any(_a_job(w) or w.lower() in RELATIONS for w in said["role"].split())
    if said is None:
        return False
    words = said["name"].split()
    person_shaped = len(words) <= 2 and all(re.fullmatch(r"[A-Z][a-z]+", w) for w in words) and words[-1].lower() not in FIRM_WORDS
    role = said["role"].split()
    return person_shaped and any(_a_job(w) for w in role[:3])


def _sentence_at(text: str, at: int) -> str:
    """The sentence of `text` that holds the character at `at`."""
    start = max((m.end() for m in re.finditer(r"[.!?]+\s+", text[:at])), default=0)
    end = re.search(r"[.!?]+(?:\s|$)", text[at:])
    return text[start: at + end.start()] if end else text[start:]


def _sentences_naming(text: str, names: list[str | None]) -> str:
    """The sentences of `text` that name one of `names`; the whole text when none is found as said."""
    found = [m for name in names if name and (m := re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text, re.I))]
    return " ".join(dict.fromkeys(_sentence_at(text, m.start()) for m in found)) if found else text


def _fact(ctx: Context, attribute: str, new: str, old: str | None, confidence: float, when: datetime | None) -> ExtractedFact:
    sentence = f"We use {new} instead of {old}." if old else f"We use {new}."
    return ExtractedFact(subject=ctx.we, attribute=attribute, value=new, object_entity=new, object_kind="organization", sentence=sentence,
                         previous_value=old, confidence=confidence, importance=0.7, valid_from=when)


# A switch looked at, tried or wished for is none made.
_NOT_SO = re.compile(r"\b(?:looked at|looking at|thinking (?:about|of)|considering|consider|might|maybe|perhaps|should we|could we|shall we|"
                     r"not worth|staying put|sticking with|stick with|trial(?:l?ing|l?ed)?|testing|proposal|propos(?:e|ed|ing)|suggest(?:ed|ion|ing)?|"
                     r"idea|if we|want to|would|wish|hope|not switching|not moving|aren't|won't|not going)\b", re.I)


# Emoji, which chat puts between a name and what is said of it ("bye BSG 👋").
_EMOJI = re.compile(r"[\U0001F000-\U0001FAFF\u2600-\u27BF]")


def _gone(text: str, ctx: Context) -> list[str]:
    """The names a statement (without its emoji) says are gone: "bye dropbox", "quickbooks is cancelled", "the sumup
    contract is up", "we're leaving peninsula", "… is replacing rxworks", and after "no more" only a name ("no more
    slack"; not "no more paper claim forms")."""
    return _names(_GONE_AFTER, text, ctx, backwards=False) + _names(_GONE_BEFORE, text, ctx, backwards=True) + \
        _names(_ENDING, text, ctx, backwards=True) + _names(_ENDING_WITH, text, ctx, backwards=False) + _names(_LEAVING, text, ctx, backwards=False) + \
        _names(_REPLACED_BY, text, ctx, backwards=False) + \
        [name for name in _names(_NO_MORE, text, ctx, backwards=False) if _typed_as_name(name, text) or " " not in name]


def gone_names(text: str, ctx: Context) -> list[str]:
    """The names a statement says are gone, in chat's shape ("bye dropbox", "quickbooks is cancelled")."""
    text = _EMOJI.sub(" ", text)
    return [name for name in dict.fromkeys(_gone(text, ctx)) if _typed_as_name(name, text) or " " not in name]


def switch_read(text: str, ctx: Context, *, topic: str | None = None) -> list[ExtractedFact]:
    """The switch a team's chat statement says in its own shape, as facts (none when it says no single one)."""
    if not ctx.team:
        return []
    text = _EMOJI.sub(" ", text)
    if (m := _FOR_PAIR.search(text)) and (new := _name(m["name"], ctx)) and _typed_as_name(new, text) and (old := _name(m["old"], ctx, whole=True)):
        olds, news = [old], [new]
    elif pair := _replacing_pair(text, ctx):
        olds, news = [pair[0]], [pair[1]]
    elif (m := _ARROW.search(text)) and (old := _name(m["old"], ctx, backwards=True)) and (new := _name(m["name"], ctx)):
        olds, news = [old], [new]
    elif m := _FROM_TO.search(text):
        if re.match(r"(?:my|his|her|their|your)\b", m["fn"].strip(), re.I):
            return []  # "I switched my phone from Android to iPhone": the speaker's own thing
        if re.match(r"mov", m.group(0), re.I) and not m["fn"].strip() and not re.search(r"\boff\b", m.group(0), re.I) and re.search(
                r"(?:^|[.!?]\s+|\b(?:i|we|i've|we've|i'm|we're|just|finally|have|has|all)\s+)" + re.escape(m.group(0)[:4]), text, re.I):
            return []  # "hi all! moved from portland to kingsbridge last week": a home, not a tool
        old = _name(m["old"], ctx, whole=True, described=bool(re.search(r"\bfrom\s+(?:the|our)\s+$", text[:m.start("old")], re.I)))
        new = _name(m["name"], ctx, described=bool(re.search(r"\b(?:the|our)\s+$", text[:m.start("name")], re.I)))
        olds, news = ([old] if old else []), ([new] if new else [])
        said_ends = {n.casefold() for n in olds + news}
        if re.search(r"\boff\b", m.group(0), re.I) and any(g.casefold() not in said_ends for g in _gone(text, ctx)):
            return []  # "email's moving off godaddy onto fastmail and we're dropping zoom too": two switches in one breath
    else:
        olds = _gone(text, ctx)
        news = _names(_NEW_AFTER, text, ctx, backwards=False) + _names(_NEW_BEFORE, text, ctx, backwards=True)
        if not news and olds and (m := _MOVED_TO.search(text)) and (new := _name(m["name"], ctx)):
            news = [new]
    if re.search(r"\b[A-Z][a-z]", text):  # a text typed with capitals names its tools with them ("We switched to circuit …" names none)
        olds, news = [n for n in olds if _typed_as_name(n, text)], [n for n in news if _typed_as_name(n, text)]
    olds = list(dict.fromkeys(olds))
    news = [n for n in dict.fromkeys(news) if n.casefold() not in {o.casefold() for o in olds}]
    if len(news) != 1 or len(olds) > 1:
        return []
    new, old = news[0], (olds[0] if olds else None)
    if _NOT_SO.search(_sentences_naming(text, [new, old])):
        return []  # looked at, tried or wished for (in the sentences that name the switch: "(we did trial monday.com too)" is another's)
    if not old and _person_in_a_role(new, text):
        return []  # "Ruben is now our tech lead": a person's role, not a tool
    if known_place(new) or re.search(rf"{re.escape(new)}\s+(?:in|at)\s+(?:the\s+)?(?-i:[A-Z])", text, re.I):
        return []  # "moved from europe-west1 to europe-west4 in the Netherlands": a place
    said_fn = m["fn"].strip() if (m := _FROM_TO.search(text) or _MOVED_TO.search(text)) else ""
    if not set(said_fn.lower().split()) - {"over", "across", "back", "everything", "it", "us", "all", "them", "things", "stuff"}:
        said_fn = ""  # "bookings are moving over to checkfront": no function said after the verb
    when = _when(text, ctx)
    if (under_way := _UNDER_WAY.search(text)) and not when and TIME_OR_WISH.search(_sentence_at(text, under_way.start())):
        return []  # "paging is moving to rootly soon": a plan with no day said. With one ("… on 1 july", said in june) it begins then.
    fn = _function(text, new, {new.casefold(), (old or "").casefold()}, ctx, topic, said=said_fn)
    if not fn and not (_typed_as_name(new, text) or (old and _typed_as_name(old, text))):
        return []  # "no more meetings, we're going with async updates": no name and no function
    if not _SWITCHED.search(text) and re.search(r"\bmov(?:e|es|ed|ing)\b", text, re.I) and not _typed_as_name(new, text) \
            and not (old and _typed_as_name(old, text)):
        return []  # "the defib has moved from reception to the staff corridor": a thing moved to a place
    if fn and (old or _SWITCH_SAID.search(text)):
        return [_fact(ctx, tool_attribute(fn), new, old, 0.7, when)]
    if old and not re.search(r"\b(?:moved|moving|move)\b", text, re.I) or old and _FROM_TO.search(text):
        return [_fact(ctx, REPLACEMENT_ATTRIBUTE, new, old, 0.7, when)]
    return []
