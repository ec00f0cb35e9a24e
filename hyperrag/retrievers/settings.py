"""One settings class per retrieval method: what ``hydra_configs/method/<name>.yaml`` may say, nothing else.

The YAML's ``retriever`` node instantiates the class (``_target_``); the YAML holds every value, the class
only types and bounds them (see :mod:`hyperrag.config`), so a bad override stops at composition with one line
naming it. Each class names its retriever (``retriever``), which
:func:`hyperrag.runners.prepare.build_retriever` builds. A new setting is one line here and one in the YAML.
Tests and scripts compose a method's settings with :func:`hyperrag.config.method_settings` instead of
repeating them.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import Field, ValidationInfo, field_validator
from typing_extensions import TypedDict

from hyperrag.causal.generation import GenerationSettings
from hyperrag.causal.settings import CausalGraphSettings
from hyperrag.causal.traversal import TraversalSettings
from hyperrag.config.validation import (
    Cosine,
    NonNegativeFloat,
    NonNegativeInt,
    PositiveFloat,
    PositiveInt,
    Probability,
    settings,
)
from hyperrag.dedup.store import DedupSettings
from hyperrag.expansion.path_selection import PathSelectionSettings
from hyperrag.hierarchy.gates import GateSettings
from hyperrag.hierarchy.hierarchy import HierarchySettings
from hyperrag.hierarchy.modules import ModuleTextSettings
from hyperrag.hierarchy.summaries import SummarySettings
from hyperrag.index.kg_index import GraphSettings
from hyperrag.passage_graph.entities import KeyEntitySettings
from hyperrag.passage_graph.explicit import ExplicitSettings
from hyperrag.passage_graph.implicit import ImplicitSettings
from hyperrag.passage_graph.keywords import KeywordSettings
from hyperrag.retrievers.edge_scoring import EdgeScoringSettings
from hyperrag.tree.summary_tree import TreeSettings

#: PPR damping: the probability of following an edge (0 and 1 have no personalised stationary vector)
Damping = Annotated[float, Field(gt=0, lt=1)]


# ---- baselines ---------------------------------------------------------------------------------------------
@settings
class BM25Settings:
    """``method/bm25.yaml``.

    Attributes:
        k1, b: BM25 parameters.
        stemmer: Snowball language for PyStemmer, or None for no stemming.
        stopwords: bm25s stop-word list name (``en``) or None.
    """

    retriever: ClassVar[str] = "hyperrag.retrievers.bm25.BM25Retriever"
    k1: NonNegativeFloat
    b: Probability
    stemmer: str | None
    stopwords: str | None


@settings
class DenseSettings:
    """``method/dense.yaml``: dense retrieval has no settings of its own (the embedder is ``embedder/``)."""

    retriever: ClassVar[str] = "hyperrag.retrievers.dense.DenseRetriever"


@settings
class NaiveSettings:
    """``method/naive.yaml``: standard RAG — dense top-k passages to the QA reader (``answer_top_n`` of the run
    is k; the embedder is ``embedder/``); nothing of its own."""

    retriever: ClassVar[str] = "hyperrag.retrievers.naive.NaiveRAGRetriever"


@settings
class NoRetrievalSettings:
    """``method/no_retrieval.yaml``: the reader alone (closed book); nothing of its own."""

    retriever: ClassVar[str] = "hyperrag.retrievers.no_retrieval.NoRetrievalRetriever"


# ---- GraphRAG, LightRAG, RAPTOR ----------------------------------------------------------------------------
@settings
class GraphRAGLocalSettings:
    """``method/graphrag_local.yaml``: GraphRAG's local search over the module hierarchy's community reports.

    Attributes:
        top_k_entities, oversample: entities matched to the query by embedding: ``top_k_entities × oversample``
            (GraphRAG: 10 × 2).
        top_k_relationships: out-of-network relationships kept per matched entity (GraphRAG: 10).
        max_context_tokens: the whole context's budget (GraphRAG: 12,000).
        community_prop, text_unit_prop: shares of the budget for community reports and for text units; the rest
            goes to the entity and relationship tables (GraphRAG: 0.15 and 0.5). Together at most 1.
        community_level: community level of the reports (0 = root; GraphRAG: 2).
        answer: answer from the context with the LLM (``details.answer``).
        hierarchy, module_text, summaries: the Leiden hierarchy and its reports (LLM module summaries or the
            stand-in).
        graph: the knowledge-graph index settings (``graph/``).
        index_root: where KG and hierarchy indexes live (``null``: ``$HYPERRAG_CACHE/index``).
    """

    retriever: ClassVar[str] = "hyperrag.retrievers.graphrag_local.GraphRAGLocalRetriever"
    top_k_entities: PositiveInt
    oversample: PositiveInt
    top_k_relationships: PositiveInt
    max_context_tokens: PositiveInt
    community_prop: Probability
    text_unit_prop: Probability
    community_level: NonNegativeInt
    answer: bool
    hierarchy: HierarchySettings
    module_text: ModuleTextSettings
    summaries: SummarySettings
    graph: GraphSettings
    index_root: str | None

    @field_validator("text_unit_prop")
    @classmethod
    def _shares_fit(cls, value: float, info: ValidationInfo) -> float:
        if info.data.get("community_prop", 0.0) + value > 1:
            raise ValueError("community_prop + text_unit_prop must be <= 1")
        return value


@settings
class GraphRAGGlobalSettings:
    """``method/graphrag_global.yaml``: GraphRAG's global search (map over community reports, reduce).

    Attributes:
        community_level: level of the reports mapped (0 = root; GraphRAG: 2).
        max_reports: only the reports most similar to the query take part (``null``: every report at the level,
            as GraphRAG does; a number bounds the map calls per query).
        map_context_tokens: report tokens per map call (GraphRAG: 12,000).
        map_max_words, reduce_max_words: word limits of the map points and of the answer (GraphRAG: 1,000 /
            2,000 — its reduce writes a report; a QA answer is short).
        reduce_context_tokens: point tokens the reduce step reads, best first (GraphRAG: 12,000).
        response_type: the answer's length and format, as the reduce prompt states it.
        hierarchy, module_text, summaries, graph, index_root: as ``graphrag_local``.
    """

    retriever: ClassVar[str] = "hyperrag.retrievers.graphrag_global.GraphRAGGlobalRetriever"
    community_level: NonNegativeInt
    max_reports: PositiveInt | None
    map_context_tokens: PositiveInt
    map_max_words: PositiveInt
    reduce_context_tokens: PositiveInt
    reduce_max_words: PositiveInt
    response_type: str
    hierarchy: HierarchySettings
    module_text: ModuleTextSettings
    summaries: SummarySettings
    graph: GraphSettings
    index_root: str | None


@settings
class LightRAGSettings:
    """``method/lightrag.yaml``: LightRAG's dual-level retrieval.

    Attributes:
        mode: ``naive`` (chunks by vector search), ``local`` (low-level keywords → entities), ``global``
            (high-level keywords → relations), ``hybrid`` (both), ``mix`` (both plus vector chunks).
        keywords: ``llm`` (the ``lightrag_keywords`` task; YAKE when it cannot run, counted) or ``yake``.
        yake: YAKE settings of the LLM-free keywords.
        top_k: entities (local) and relations (global) retrieved per query (LightRAG: 40).
        chunk_top_k: chunks of the vector search (naive, mix; LightRAG: 20).
        related_chunks: chunks the first entity / relation contributes; the last contributes 1 (LightRAG: 5).
        max_entity_tokens, max_relation_tokens, max_total_tokens: context budgets (LightRAG: 6,000 / 8,000 /
            30,000; the chunks get what the total leaves).
        answer: answer from the context with the LLM (``details.answer``).
        graph: the knowledge-graph index settings (``graph/``).
        index_root: where KG indexes live (``null``: ``$HYPERRAG_CACHE/index``).
    """

    retriever: ClassVar[str] = "hyperrag.retrievers.lightrag.LightRAGRetriever"
    mode: Literal["naive", "local", "global", "hybrid", "mix"]
    keywords: Literal["llm", "yake"]
    yake: KeywordSettings
    top_k: PositiveInt
    chunk_top_k: PositiveInt
    related_chunks: PositiveInt
    max_entity_tokens: PositiveInt
    max_relation_tokens: PositiveInt
    max_total_tokens: PositiveInt
    answer: bool
    graph: GraphSettings
    index_root: str | None


@settings
class RaptorSettings:
    """``method/raptor.yaml``: RAPTOR's tree over the passages and its retrieval.

    Attributes:
        tree: the tree (:class:`~hyperrag.tree.summary_tree.TreeSettings`: layers, clustering, summary length).
        retrieval: ``collapsed`` (every node ranked at once; RAPTOR's better variant) or ``traversal`` (top
            nodes per layer, top down).
        top_k: nodes in the context at most (collapsed; RAPTOR: 10) or per layer (traversal; RAPTOR: 5).
        max_context_tokens: the context's token budget (RAPTOR: 3,500).
        answer: answer from the selected nodes with the LLM (``details.answer``).
        index_root: where trees live (``null``: ``$HYPERRAG_CACHE/index``).
    """

    retriever: ClassVar[str] = "hyperrag.retrievers.raptor.RaptorRetriever"
    tree: TreeSettings
    retrieval: Literal["collapsed", "traversal"]
    top_k: PositiveInt
    max_context_tokens: PositiveInt
    answer: bool
    index_root: str | None


class KGEdgeWeights(TypedDict):
    """Multipliers of the knowledge graph's stored edge weights, one per edge type (all three given)."""

    relation: NonNegativeFloat
    synonym: NonNegativeFloat
    context: NonNegativeFloat


# ---- LinearRAG ---------------------------------------------------------------------------------------------
@settings
class LinearRAGSettings:
    """``method/linearrag.yaml`` (LinearRAG, Zhuang et al., ICLR 2026: the authors' ``LinearRAGConfig``).

    Attributes:
        max_iterations: semantic-bridging rounds, the seed round included (3: two hops).
        iteration_threshold: an entity spreads, and a bridged score counts, only from this score up.
        top_k_sentence: sentences each active entity picks per round (by cosine to the question).
        bridging: ``iterative`` (the authors' default, entity by entity) or ``vectorized`` (their
            ``use_vectorized_retrieval``: sparse mention-matrix products per round).
        passage_ratio: weight of the min-max normalised dense passage score in a passage's reset score.
        passage_node_weight: the passages' reset scores are scaled by this before PPR.
        damping: PPR damping.
        adjacent_passage_edges: an edge of weight 1 between consecutive corpus passages (the authors' code numbers
            every chunk ``<idx>:`` and links neighbours); it carries the benchmark's corpus order (a question's
            passages listed together) into the graph, so the framework's default is off.
        attribute_fallback: the authors' ``enable_hybrid_attribute_fallback``: a question naming an attribute
            keyword adds ``attribute_keyword_boost × log(1 + keywords in both)`` to each passage's score.
        attribute_keyword_boost: that boost.
        attribute_query_keywords: the keywords.
        excluded_labels: spaCy entity labels left out of the graph and the question (the authors': ORDINAL,
            CARDINAL).
        ner_components: ``ner``: spaCy's NER and statistical sentence segmenter only (what the method reads:
            entities and their sentences; about half the parse time), or ``full``: the whole pipeline, sentences
            from the dependency parser (the authors' ``spacy.load``).
        line_break_sentences: a line break ends a sentence (``ner_components: ner`` only; with ``full`` the
            parser's sentences are kept): a passage's title line
            (``title\ntext``) is its own sentence, so the NER cannot read title and first words as one entity.
        ner_batch_size: passages per spaCy batch.
        tol, max_iter: PPR convergence.
        index_root: where the NER records live (``null``: the working directory).
        title_mentions: **not the authors'** (a labelled departure, off by default): each passage's title is added
            as an entity mention of that passage (:func:`~hyperrag.graph.trigraph.with_title_mentions`), what a
            transformer NER would most likely find where the small spaCy model garbles the title line.
    """

    retriever: ClassVar[str] = "hyperrag.retrievers.linearrag.LinearRAGRetriever"
    max_iterations: PositiveInt
    iteration_threshold: float
    top_k_sentence: NonNegativeInt
    bridging: Literal["iterative", "vectorized"]
    passage_ratio: NonNegativeFloat
    passage_node_weight: NonNegativeFloat
    damping: Damping
    adjacent_passage_edges: bool
    attribute_fallback: bool
    attribute_keyword_boost: NonNegativeFloat
    attribute_query_keywords: list[str]
    excluded_labels: list[str]
    ner_components: Literal["ner", "full"]
    line_break_sentences: bool
    ner_batch_size: PositiveInt
    tol: PositiveFloat
    max_iter: PositiveInt
    index_root: str | None
    title_mentions: bool


# ---- HippoRAG 2 and CatRAG ---------------------------------------------------------------------------------
@settings
class HippoRAG2Settings:
    """``method/hipporag2.yaml``.

    Attributes:
        damping: PPR damping (probability of following an edge).
        fact_top_k: seed facts per query.
        link_top_k: seed entities kept per query (0: every entity a seed fact names).
        passage_node_weight: reset mass of passage nodes relative to entity seeds.
        fact_filter: HippoRAG 2's recognition memory (the LLM keeps the relevant top facts); needs an LLM.
        fact_filter_max: facts the filter keeps at most (HippoRAG 2's code: 5).
        fact_filter_asked: facts the filter prompt asks the model for at most (HippoRAG 2's prompt: 4;
            ``null``: no number).
        graph_weights: ``reference`` — the PPR graph weighted as HippoRAG 2's code builds it (each relation
            key in both directions with the triple count, each synonym key from each endpoint's neighbour
            list, replacing the relation key of the same ordered pair: :mod:`hyperrag.graph.reference_weights`);
            ``single`` — one edge per pair with the stored weight (triple count, cosine).
        synonym_max_neighbours: with ``reference``, synonyms listed per entity at most (HippoRAG 2: 101).
        edge_weights: per-type multipliers of the edge weights (with ``reference``: of each key).
        graph: the knowledge-graph index settings (``graph/``).
        tol, max_iter: PPR convergence.
        index_root: where KG indexes live (``null``: ``$HYPERRAG_CACHE/index``).
        failed_filter: a query whose filter call failed: ``dense_fallback`` — it keeps no fact and dense
            retrieval ranks it (the reference's ``rerank_facts`` returns no facts on an error); ``keep_all`` —
            it keeps every candidate (this code's earlier form).
        seed_ties: equal seed weights at ``link_top_k``: ``ordered`` — the entity named by the better fact
            first (deterministic); ``reference`` — the reference's order (a Python set of ``(name, vertex id)``
            pairs, then a stable sort: fixed only under a fixed ``PYTHONHASHSEED``).
        ppr_dtype: the PPR's float type: ``float32`` (fast) or ``float64`` (the reference mode: with ``tol``
            1e-10 the scores match igraph's prpack to about 1e-9).
        merge_duplicate_passages: passages with the same ``title\ntext`` are one node, as in the reference
            (its passage ids are content hashes); a merged passage is returned under its first position.
        seed_rank: what picks the ``link_top_k`` seed entities: ``after_division`` (HippoRAG 2's code: the fact
            score divided by the entity's passage count) or ``before_division`` (the mean fact score; the
            seeding ``experiment=catrag_best`` uses, so HippoRAG 2 can be compared seeded the same way).
    """

    retriever: ClassVar[str] = "hyperrag.retrievers.hipporag2.HippoRAG2Retriever"
    damping: Damping
    fact_top_k: PositiveInt
    link_top_k: NonNegativeInt
    passage_node_weight: NonNegativeFloat
    fact_filter: bool
    fact_filter_max: PositiveInt
    fact_filter_asked: PositiveInt | None
    graph_weights: Literal["reference", "single"]
    synonym_max_neighbours: PositiveInt
    edge_weights: KGEdgeWeights
    graph: GraphSettings
    tol: PositiveFloat
    max_iter: PositiveInt
    index_root: str | None
    failed_filter: Literal["dense_fallback", "keep_all"]
    seed_ties: Literal["ordered", "reference"]
    ppr_dtype: Literal["float32", "float64"]
    merge_duplicate_passages: bool
    seed_rank: Literal["after_division", "before_division"]


@settings
class CatRAGSettings(HippoRAG2Settings):
    """``method/catrag.yaml``: HippoRAG 2's settings plus

    Attributes:
        variant: ``paper`` | ``authors_code`` — which of the paper's and its authors' code's choices the YAML's
            per-choice settings take (``boost_beta``, ``boost_renormalise``, ``edge_weights.synonym``,
            ``relation_keys``, ``edge_scoring.{score_scale, weak_multiplier, tau_facts, max_facts_shown,
            seed_pool, prune_scope, target, missing_neighbour, failed_call, score_scope, arcs}``); an explicit value of one of them still wins.
        anchoring: query-named entities as weak seeds; ``anchor_epsilon`` their reset mass before division by
            their passage count; ``anchor_min_chars`` the shortest entity name anchored; with an LLM, a mention
            from query NER anchors its nearest entity when their cosine is at least ``anchor_link_threshold``.
        passage_boost: context arcs seed entity → passage holding a seed fact weighted ``× (1 + boost_beta)``;
            ``boost_renormalise``: then every passage arc of that entity rescaled to the old total.
        edge_weighting: LLM dynamic edge weights (skipped without an LLM), with ``edge_scoring``.
        relation_keys: with ``graph_weights: reference``, how a triple fills the ordered relation keys: ``both``
            (HippoRAG 2's code: 1 on ``(a, b)`` and on ``(b, a)``) or ``subject_object`` (the authors' code: 2
            on ``(a, b)``, so a synonym key replaces that direction's whole relation weight).
        synonym_per: with ``graph_weights: reference``, what ``edge_weights.synonym`` weighs: ``key`` (each
            ordered synonym key, HippoRAG 2's code: a pair listed from both ends gets twice it) or ``pair`` (the
            pair's keys share it: Table 7's "2.0 × similarity" read per synonym edge).
        anchor_rule: ``unseeded`` (only an entity no fact seeded gets anchor mass, the authors' code) or
            ``max`` (a fact-seeded entity keeps the larger of its fact weight and its anchor mass).
    """

    retriever: ClassVar[str] = "hyperrag.retrievers.catrag.CatRAGRetriever"
    variant: Literal["paper", "authors_code"]
    anchoring: bool
    anchor_epsilon: NonNegativeFloat
    anchor_min_chars: NonNegativeInt
    anchor_link_threshold: Cosine
    passage_boost: bool
    boost_beta: NonNegativeFloat
    boost_renormalise: bool
    edge_weighting: bool
    edge_scoring: EdgeScoringSettings
    relation_keys: Literal["both", "subject_object"]
    synonym_per: Literal["key", "pair"]
    anchor_rule: Literal["unseeded", "max"]


# ---- HugRAG ------------------------------------------------------------------------------------------------
@settings
class HugRAGSettings:
    """``method/hugrag.yaml``.

    Attributes:
        alpha: weight of the cosine in the hybrid score (``1 − alpha`` on the lexical score).
        lexical: ``token_overlap`` (the paper's normalised token overlap ``|Q ∩ T| / |Q|``), ``bm25`` (bm25s scores
            / per-query max; a labelled option off the paper) or ``overlap`` (token-set overlap coefficient).
        lexical_text: what Lex reads of an entity: ``title+description`` (name and description — its facts when
            the graph has no descriptions — cut to ``node_tokens``; the paper's "title and summary") or ``title``.
        seeding: ``per_level`` (Algorithm 1 line 12: ``k0`` entities and ``kl`` modules of every module level) or
            ``pooled`` (``kl`` modules of all levels together: a labelled option off the paper).
        k0, kl: MMR seeds per query among entities (K_0) and per module level (K_ℓ; ``pooled``: in all).
        max_hops: the hop limit h of the gated traversal (``null``: none).
        mmr_lambda: MMR trade-off λ (1 = pure relevance); ``mmr_pool``: candidates the MMR chooses from.
        gamma: hop decay γ of the expansion gain.
        edge_weights: ``{gate, hierarchy, structural}`` multipliers w(type).
        min_gain: the expansion stops when the best frontier gain is below this.
        token_budget: the taken nodes' texts stay within this many tokens (a node that does not fit is skipped).
        node_tokens: a node's text is cut to this many tokens (its cost in the budget and its row in the table).
        max_nodes: optional cap on nodes taken per query.
        passage_aggregate: how a passage accumulates its entities' gains, ``sum`` or ``max``.
        dense_mix: LLM-free passage score ``(1 − mix) · gain / max gain + mix · cos(q, passage)`` (0 = gain only,
            ties by the cosine).
        entity_specificity: ``log`` spreads an entity's gain to its passages divided by
            ``log(1 + #passages mentioning it)``; ``none`` gives each passage the full gain.
        extraction: ``graphrag`` (any dataset, with an LLM: typed entities with descriptions, relations with
            descriptions and strength; a passage the LLM could not extract keeps the dataset's OpenIE record) or
            ``none`` (the dataset's OpenIE file).
        dedup, hierarchy, module_text, summaries, gates, path_selection: the stages' settings.
        graph: the knowledge-graph index settings (``graph/``).
        index_root: where KG and hierarchy indexes live (``null``: ``$HYPERRAG_CACHE/index``).
        details_nodes: expanded nodes listed per query in the prediction details.
        answer_style: the answer step's ``short`` or ``explanatory`` answers (the run's ``answer_style``).
        prompts: the LLM steps' prompt texts: ``paper`` (Figs 5/6/7/9's messages exactly as printed, no system
            message, no data blocks, no constrained decoding; replies read as the figures ask: Fig 9 a bare yes / no,
            Figs 5/6 the JSON they print, Fig 7 free text), ``paper_json`` (the figures' texts in our frame: data
            blocks, our system message, a JSON schema as constrained decoding) or ``extended`` (our restatements
            with our additions: renamed keys, abstention, the explanatory length, the gate's direction field); the
            module summary prompt is ours in every form (the paper prints none).
    """

    retriever: ClassVar[str] = "hyperrag.retrievers.hugrag.HugRAGRetriever"
    alpha: Probability
    lexical: Literal["token_overlap", "bm25", "overlap"]
    lexical_text: Literal["title+description", "title"]
    seeding: Literal["per_level", "pooled"]
    k0: NonNegativeInt
    kl: NonNegativeInt
    max_hops: PositiveInt | None
    mmr_lambda: Probability
    mmr_pool: PositiveInt
    gamma: Annotated[float, Field(gt=0, le=1)]
    edge_weights: dict[Literal["gate", "hierarchy", "structural"], NonNegativeFloat]
    min_gain: NonNegativeFloat
    token_budget: PositiveInt
    node_tokens: PositiveInt
    max_nodes: PositiveInt | None
    passage_aggregate: Literal["sum", "max"]
    dense_mix: Probability
    entity_specificity: Literal["log", "none"]
    extraction: Literal["graphrag", "none"]
    dedup: DedupSettings
    hierarchy: HierarchySettings
    module_text: ModuleTextSettings
    summaries: SummarySettings
    gates: GateSettings
    path_selection: PathSelectionSettings
    graph: GraphSettings
    index_root: str | None
    details_nodes: NonNegativeInt
    answer_style: Literal["short", "explanatory"]
    prompts: Literal["paper", "paper_json", "extended"]


# ---- HyperRAG ----------------------------------------------------------------------------------------------
@settings
class PoincareModelSettings:
    """HyperRAG's ``model``: :class:`~hyperrag.hyperbolic.PoincareEmbedding` arguments (in the ball's key).

    Attributes:
        dim: ball dimension (``null``: the sentence-embedding dimension).
        curvature: c of the ball.
        loss: ``nickel_kiela`` or ``edge_distance``.
        anchor_weight / query_anchor_weight: weight of the semantic anchor term for passages / query nodes.
        lr, betas, lr_schedule: the optimiser's rate, Adam's betas and the decay (``constant`` | ``linear`` |
            ``cosine``).
        optimizer: ``riemannian_adam`` (geoopt's: a normalised Riemannian step, about ``lr`` of hyperbolic length
            per step) or ``adam`` (plain Adam on the ball's coordinates, projected back inside the ball after each
            step: every coordinate moves about ``lr`` per step — §4.1's "Adam optimizer", read literally).
        burn_in_epochs, burn_in_lr_factor: epochs at ``lr · burn_in_lr_factor`` first (0: no burn-in).
        init_radius: mean hyperbolic radius of the projected embeddings; ``center``: centre them first.
        init_scale: half-width of a random start (unused: HyperRAG's ball starts from the embeddings).
        stabilize: geoopt's ``stabilize`` (project back every that many steps; ``null``: never).
        negative_gradients: the Nickel & Kiela negatives move too; ``false``: they are fixed reference points, so
            passages outside the graph keep their semantic positions exactly.
    """

    dim: PositiveInt | None
    curvature: PositiveFloat
    loss: Literal["nickel_kiela", "edge_distance"]
    anchor_weight: NonNegativeFloat
    query_anchor_weight: NonNegativeFloat | None
    lr: PositiveFloat
    betas: tuple[Probability, Probability]
    optimizer: Literal["riemannian_adam", "adam"]
    burn_in_epochs: NonNegativeInt
    burn_in_lr_factor: PositiveFloat
    lr_schedule: Literal["constant", "linear", "cosine"]
    init_radius: PositiveFloat
    center: bool
    init_scale: PositiveFloat
    stabilize: PositiveInt | None
    negative_gradients: bool


@settings
class PoincareTrainSettings:
    """HyperRAG's ``train`` (part of the ball's key): epochs, relations per batch, Nickel & Kiela negatives
    per relation, relations sharing one draw of negatives, seed, torch intra-op threads while the ball trains
    (``null``: torch's default). ``max_epochs: 0`` is the untrained arm: no fit, the ball as initialised (the
    projected sentence embeddings), saved and ranked like a trained one."""

    max_epochs: NonNegativeInt
    batch_size: PositiveInt
    num_negatives: PositiveInt
    negative_group_size: PositiveInt
    seed: int
    torch_threads: PositiveInt | None


@settings
class StreamingSettings:
    """HyperRAG's ``streaming`` (``protocol: streaming``): query graphs join the ball as questions arrive; every
    ``update_frequency`` questions the new and touched nodes train ``epochs`` epochs (1: each question's graph is
    trained before it is ranked) in batches of ``batch_size`` relations (``null``: ``train.batch_size``, as the
    index's fit); query nodes (question-root variant) unseen for ``max_query_age`` questions (or
    beyond ``max_query_nodes``) are pruned (``null``: never). ``epochs: 0`` is the untrained arm: query graphs
    join but nothing trains, so the ball stays as initialised (with ``train.max_epochs: 0``: the projection).
    ``order``: the questions of one ``retrieve`` call arrive in ``file`` order or ``shuffled`` (a permutation drawn
    with ``order_seed``; the predictions keep file order, each with its ``arrival`` position) — a query-order reading
    (Algorithm 1 takes the queries as they come); retrieve.py's ``batch_size`` must hold the whole query set for it to
    order the whole stream."""

    update_frequency: PositiveInt
    epochs: NonNegativeInt
    order: Literal["file", "shuffled"]
    order_seed: int
    max_query_age: PositiveInt | None
    max_query_nodes: PositiveInt | None
    batch_size: PositiveInt | None


@settings
class BallUpdateSettings:
    """HyperRAG's ``update``: a saved ball is updated (delete + insert) rather than retrained when it covers
    at least ``min_reuse`` of the dataset's corpus; after an update the pinned (trained) forest and today's
    forest fuse in the order ``fusion`` names (:mod:`hyperrag.passage_graph.graph`): ``query_first`` (query-guided
    edges, pinned then new, before any keyword edge: a streamed query edge is never crowded out by a pinned
    keyword edge) or ``pinned_first`` (the whole pinned forest first: it stays whole)."""

    min_reuse: Probability
    fusion: Literal["query_first", "pinned_first"]


@settings
class HyperRAGSettings:
    """``method/hyperrag.yaml``.

    Attributes:
        graph: ``explicit`` | ``implicit`` | ``fused`` — the forest the ball is trained on.
        query_graph: ``passages`` (the paper's query graph: passage nodes, passage–passage edges) or
            ``question_root`` (labelled variant: the question is a node tied to its passages, and to their children
            ``query_closure_depth`` edges down).
        protocol: ``transductive`` (the query file's questions' graphs are built into the ball at index time) or
            ``streaming`` (Algorithm 1: the questions arrive one at a time; each one's graph joins and trains only
            when it arrives, then it is ranked; no question's graph is in the ball before it arrives).
        keywords, explicit, key_entity, implicit: the passage graph's keyword sets, keyword edges, key-entity
            links (the fusion's entity merge) and query graphs.
        implicit_queries: ``query_file`` (the questions being retrieved) or ``none``.
        fusion: ``implicit_first`` or ``weight`` — how the ``fused`` forest is built.
        query_closure_depth: training relations add query node ↔ descendants up to this depth.
        query_edge_repeat: direct query → passage relations repeated this many times in training.
        query_position: ``projected`` (the paper's rule: the question's sentence embedding projected into the
            ball) or ``trained`` (transductive: a question that is a query node is ranked from its trained node).
        rank_scope: ``corpus`` (§3.2: "all leaf node embeddings" — every passage by hyperbolic distance) or
            ``query_graph`` (§2: "the nodes in V_i" — the question's own query-graph passages by hyperbolic
            distance first, then the rest of the corpus by the same rule).
        model, train: the ball and its training.
        multi_step: decompose with the LLM, answer the sub-questions in order, synthesise (without an LLM: single
            step, counted as skipped); ``max_sub_questions`` used at most; ``reader_passages`` shown to the reader
            per (sub-)question.
        route_simple: with ``multi_step``, the LLM first says whether the question is single-hop; those are
            answered in a single step (§4.2: "for straightforward queries, a single retrieval and reasoning cycle").
        answer_style: the multi-step final answer's style (``short`` | ``explanatory``: the run's ``answer_style``).
        streaming: the update schedule of ``protocol: streaming``.
        models_dir: root of trained models (``<models_dir>/hyperrag/...``).
        index_root: cache of keyword sets.
        retrain: train even when a checkpoint exists.
        update_epochs: epochs of the new + touched nodes' training after an insert / delete.
        update: when a saved ball is updated rather than retrained.
    """

    retriever: ClassVar[str] = "hyperrag.retrievers.hyperrag.HyperRAGRetriever"
    graph: Literal["explicit", "implicit", "fused"]
    query_graph: Literal["passages", "question_root"]
    protocol: Literal["transductive", "streaming"]
    keywords: KeywordSettings
    explicit: ExplicitSettings
    key_entity: KeyEntitySettings
    implicit_queries: Literal["query_file", "none"]
    implicit: ImplicitSettings
    fusion: Literal["implicit_first", "weight"]
    query_closure_depth: PositiveInt
    query_edge_repeat: PositiveInt
    query_position: Literal["projected", "trained"]
    rank_scope: Literal["corpus", "query_graph"]
    model: PoincareModelSettings
    train: PoincareTrainSettings
    multi_step: bool
    route_simple: bool
    max_sub_questions: PositiveInt
    reader_passages: PositiveInt
    answer_style: Literal["short", "explanatory"]
    streaming: StreamingSettings
    models_dir: str
    index_root: str | None
    retrain: bool
    update_epochs: PositiveInt
    update: BallUpdateSettings


# ---- CDF-RAG -----------------------------------------------------------------------------------------------
@settings
class CDFRAGSettings:
    """``method/cdfrag.yaml``.

    Attributes:
        classifier: pair-classifier checkpoint: ``auto`` (the newest UniCausal-trained one whose marked-text format
            and encoder match, under ``models_dir/causal_pair``), a path, or null (rule priors).
        classifier_encoder: the encoder an ``auto`` classifier must have.
        policy: refinement-policy checkpoint: ``auto`` (the newest compatible one trained on none of the scored
            questions, under ``models_dir/ppo``), a path, or null.
        fixed_action: the action when there is no policy (``none``: no refinement — Table 3's baseline).
        max_refine_steps: T, refinement actions per question at most (the policy may stop earlier).
        refine_with_llm: carry actions out with the LLM when one is available (else the stand-ins).
        expand_keywords: words the expand stand-in adds.
        causal_retrieval: the causal graph half of dual-path retrieval (Table 3's "Causal Graph"); off: no causal
            graph, no causal paths, no causal pairs for generation, no causal check.
        semantic_k: k of the semantic top-k T_sem in the knowledge set K = T_sem ∪ (passages of C_graph).
        causal_k: passages of the causal paths C_graph (not in T_sem; best path first) that join K, at most.
        union_order: the ranking K gives (``semantic_first``: T_sem, C_graph's passages, the rest by cosine;
            ``dense``: T_sem, then the rest by cosine); both keep every T_sem passage at its dense rank.
        causal, traversal, generation: the causal graph, its traversal and generation with its checks.
        answer_style: how the loop's answer, fallback and rewrite answer: ``short`` or ``explanatory`` (the paper's
            explanations, with the short answer EM/F1 score); the run's ``answer_style`` under ``retrieve.py``.
        details_paths: causal paths written per query in the prediction details.
        models_dir: where ``auto`` looks for checkpoints.
        index_root: where causal indexes are cached (``null``: ``$HYPERRAG_CACHE/index``).
    """

    retriever: ClassVar[str] = "hyperrag.retrievers.cdfrag.CDFRAGRetriever"
    classifier: str | None
    classifier_encoder: str
    policy: str | None
    fixed_action: Literal["expand", "simplify", "decompose", "none"]
    max_refine_steps: PositiveInt
    refine_with_llm: bool
    expand_keywords: NonNegativeInt
    causal_retrieval: bool
    semantic_k: PositiveInt
    causal_k: NonNegativeInt
    union_order: Literal["semantic_first", "dense"]
    causal: CausalGraphSettings
    traversal: TraversalSettings
    generation: GenerationSettings
    answer_style: Literal["short", "explanatory"]
    details_paths: NonNegativeInt
    models_dir: str
    index_root: str | None


__all__ = ["BM25Settings", "BallUpdateSettings", "CDFRAGSettings", "CatRAGSettings", "DenseSettings",
           "GraphRAGGlobalSettings", "GraphRAGLocalSettings", "HippoRAG2Settings", "HugRAGSettings",
           "HyperRAGSettings", "KGEdgeWeights", "LightRAGSettings", "LinearRAGSettings", "NaiveSettings", "NoRetrievalSettings",
           "PoincareModelSettings", "PoincareTrainSettings", "RaptorSettings", "StreamingSettings"]
