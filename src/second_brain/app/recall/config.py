"""Every weight and threshold of recall, in one object (the /config API edits the same names)."""

from dataclasses import dataclass, field


@dataclass(frozen=True)
class RecallConfig:
    # keyword arm
    keyword_candidate_limit: int = 500
    common_word_limit: int = 100  # newest matches taken when every word is too common to rank cheaply
    substring_match_weight: float = 0.25
    query_saturation_fraction: float = 0.3  # a word in more than this share of memories is not distinctive
    max_query_terms: int = 6
    fts_match_budget: int = 2000  # sum of document frequencies one OR query may rank
    # vector arm
    # Memories the k-NN side hands to fusion; every one is read, scored on the words and ranked. Chosen by
    # leave-one-conversation-out on LoCoMo over 100-200 (bench/locomo.py --grid): 160 on four folds of five, R@5
    # 0.749 / R@10 0.815 held out. On all five: 160 0.750 / 0.815, 200 0.749 / 0.814, 100 0.749 / 0.813. At 100k
    # a recall takes 1 ms less with 160 than with 200, 2.5 ms less with 100.
    vector_pool: int = 160
    # fusion: each arm's scores are normalised to [0, 1] within the query, sharpened, then mixed
    keyword_weight: float = 0.7
    dense_weight: float = 0.65  # under keyword_weight: an exact match of the words outranks the closest meaning
    # (0.7 scored 0.002 R@5 more on LoCoMo, leave-one-conversation-out with e5-small-v2, bench/locomo.py)
    dense_floor: float | None = None  # cosine at or under this is no semantic evidence; None: the embedder's own
    keyword_sharpness: float = 2.0  # >1 favours memories holding all the rare words over those holding some
    dense_sharpness: float = 1.0
    dense_scale_min: float = 0.2  # a best cosine under dense_floor + this is not stretched to full weight
    # When no candidate clears the floor, it drops to this quantile of the query's candidate cosines (None: never):
    # a meaning match the model scores under its floor but above nine in ten candidates answers, weak, instead of
    # "Nothing found" (issue 42, bench/semantic_alone.py: empty answers 2/30 -> 0/30, hit@3 0.533 -> 0.600; 0.9
    # and 0.95 tie, 0.5 and 0.75 lose 0.033 hit@3 as more weak candidates gain episodic context). A query with real
    # matches keeps the model's floor: its answer gains no weak neighbours. LoCoMo unchanged (0.750 / 0.815).
    dense_floor_quantile: float | None = 0.9
    # A memory's keyword side counts fully only when it holds this share of the query's word weight (Σ idf; 0: off):
    # one common word shared out of three ("weekend") no longer outranks a strong meaning match. Issue 61, with the
    # embedder guard below, side by side (bench/questions.py, bench/semantic_alone.py, bench/locomo.py): 0.5 ->
    # 0.75 moves natural questions hit@1/hit@3 0.700/0.960 -> 0.740/0.980, meaning-only pairs hit@1 0.467 -> 0.500
    # (hit@3 0.733 both), LoCoMo R@5/R@10 0.756/0.817 -> 0.758/0.814 (leave-one-conversation-out 0.758/0.814).
    keyword_scale_min: float = 0.75
    # The embedder's best `embedder_places` candidates each stay within `embedder_slack` places of their rank by
    # cosine alone (among the lines of the speaker a query names, a named date's lift included: ranking.embedder_guard):
    # words matched in other memories, recency or context cannot bury what the meaning finds. Natural questions
    # hit@3 0.880 -> 0.940 with the guard alone (2 places, slack 1; 3 places and slack 0 tie on hit@3 and lose hit@1);
    # LoCoMo unchanged, meaning-only pairs unchanged. Guarding the fused scores instead, before recency and context,
    # kept 0.880-0.920: most burying came after fusion.
    embedder_places: int = 2
    embedder_slack: int = 1
    # The embedder's best comes first when its cosine beats the fused first's by this much (ranking.meaning_lead;
    # 1: off): recency and words matched elsewhere break near ties in meaning, never a clear difference. Chosen
    # leave-one-question-out on natural questions over 0.03-0.2 (bench/questions.py): 0.05, hit@1 0.760 -> 0.860
    # (0.08 0.840, 0.1 0.780, 0.15 and over 0.760), hit@3 0.980 either way. LoCoMo R@5/R@10 0.759/0.814 ->
    # 0.761/0.814 (leave-one-conversation-out picks 0.03-0.05), its R@1 0.456 -> 0.442 (0.08: 0.458); meaning-only
    # pairs unchanged (0.500/0.733).
    meaning_lead: float = 0.05
    # episodic context: memories written next to a strong match (same source, minutes apart) share its score
    context_weight: float = 0.5
    context_reach: int = 2  # neighbours on each side
    context_window_ms: int = 600_000
    context_seeds: int = 20
    rank_pool: int = 500  # candidates, best fused first, that the ranking signals are computed for
    # ranking signals
    recency_floor: float = 0.6
    recency_floor_durable: float = 0.9
    recency_floor_volatile: float = 0.15
    half_life_days: dict[str, float] = field(
        default_factory=lambda: {"task": 7.0, "context": 180.0, "work": 90.0, "default": 30.0}
    )
    contradiction_importance_step: float = 1.0
    tag_boost_step: float = 0.15
    tag_boost_max: float = 1.5
    rolled_up_weight: float = 0.4
    named_date_boost: float = 2.0  # a query naming a day, month or year ("in May 2023") lifts memories written then
    # a conversation line ("Caroline: …") by someone other than the speaker the query names ("What did Melanie
    # paint?"): LoCoMo R@5 0.703 -> 0.747 with the name also left out of the query's embedding; flat from 0.4 to 0.6
    other_speaker_weight: float = 0.6
    mmr_lambda: float = 0.7
    mmr_redundancy: float = 0.7  # only similarity above this counts as repetition in the diversity pass
    # Of the first this many results, a newer note about the same thing announcing a change the older does not ranks
    # first, as a flagged possible update does (history.newer_first): notes imported or mirrored were never flagged.
    # "About the same thing": their vectors' cosine at least announced_cosine. On the capture bench's development
    # pairs, contradictions.announced fires on 35 of 40 changes and on none of 60 look-alikes or distinct notes; 0.55
    # keeps 30 of the 35 (0.6 too, 0.65 22). Capture's own 0.45 let a product sync whose other topic "starts Nov 2"
    # step in front of the note a question asked for (natural questions: cosine 0.52).
    announced_reach: int = 3
    announced_cosine: float = 0.55
    relevance_floor: float = 0.05  # results scoring under this share of the best are dropped
    # graph expansion (hops > 0): linked memories score seed x decay^hop x edge weight
    default_hops: int = 0  # when a recall does not say
    graph_hop_decay: float = 0.6
    graph_fanout: int = 8
    graph_max_nodes: int = 50
    # cross-encoder: "auto" runs it when the top two are within the margin and the query has no identifier
    timezone: str = ""  # of time phrases ("yesterday"); "" is the service's own zone
    rerank_mode: str = "auto"
    rerank_ambiguity_margin: float = 0.15
    rerank_candidates: int = 30
    rerank_timeout_ms: int = 1500
    # output
    snippet_chars: int = 400
    full_match_chars: int = 4000
    full_matches: int = 2
    strong_match_ratio: float = 0.75
    # A query holding a word no memory holds ("Zendesk", "orthodontist" in a brain that never wrote either) is
    # answered at best partially: every result's evidence (its `match` and score) is scaled by this; 1: off.
    unheld_share: float = 0.5
