"""The composition root: settings in, a wired brain out. Nothing else builds adapters."""

import logging
import os
import secrets
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from threadpoolctl import threadpool_limits

from .adapters import integrations as connector_modules
from .adapters.blobs.folder import FolderParts
from .adapters.event_store.sqlite import SQLiteEventStore, copy_log
from .adapters.lexicon import english_words
from .adapters.llm.none import NoLanguageModel
from .adapters.llm.openai_compat import OpenAICompatibleModel
from .adapters.process_memory import limit_malloc_arenas, release_freed_memory
from .adapters.push.webpush import WebPushGateway, resolve
from .adapters.read_model.sqlite import SQLiteReadModel
from .adapters.read_model.sqlite_check import SQLiteIndexCheck
from .adapters.read_model.sqlite_projection import SQLiteEntryProjection
from .adapters.secrets.memory import InMemorySecrets
from .adapters.secrets.sealed import SealedFileSecrets
from .adapters.sqlite_database import SQLiteDatabase
from .adapters.vector_index.sqlite import SQLiteVectorIndex
from .app.brain import Brain
from .app.config import SettingsService
from .app.graph.jobs import GraphPass
from .app.graph.links import LinkService
from .app.graph.view import GraphView
from .app.handling import Context
from .app.insights.brief import BriefService
from .app.insights.digest import CompressionJob, DigestService
from .app.insights.patterns import PatternService, PatternsJob
from .app.integrations.background import Continuation
from .app.integrations.jobs import IntegrationSync
from .app.integrations.service import IntegrationService
from .app.maintenance import MaintenanceRunner, MaintenanceScheduler
from .app.maintenance.runner import parse_daily
from .app.memories.conflicts import ConflictReview
from .app.memories.counting import CountingLane
from .app.memories.indexing import Foreground, Indexer, IndexingWorker
from .app.memories.jobs import Housekeeping, IndexVerification, RecallFold, StalenessPass
from .app.memories.projects import ProjectService
from .app.memories.queries import MemoryQueries
from .app.memories.service import MemoryService
from .app.memories.triage import Triage
from .app.recall.pipeline import RecallService
from .app.recall.rerank import MAX_CALLS as RERANK_CALLS
from .app.reminders.extraction import Extractor
from .app.reminders.jobs import ExtractionJob, PushReminders
from .app.reminders.push import PushService
from .app.team.service import TeamService, workspace_eraser
from .app.transfer import Transfer
from .domain.events import MemoryCaptured, MemoryRevised
from .domain.identity import owner
from .embedding import load_embedder
from .ports.clock import Clock, SystemClock
from .ports.embedder import Embedder
from .ports.event_store import EventStore
from .ports.index_check import IndexCheck
from .ports.integrations import Connector
from .ports.llm import LanguageModel
from .ports.read_model import ReadModel
from .ports.recall_tally import RecallTally
from .ports.reranker import Reranker
from .ports.secrets import SecretStore
from .ports.vector_index import VectorIndex
from .settings import Settings

__all__ = ["Brain", "assemble", "build", "limit_malloc_arenas", "materialise", "replay"]
if TYPE_CHECKING:
    from .adapters.integrations.watch import FolderWatcher

log = logging.getLogger("second_brain")


def build(settings: Settings, clock: Clock | None = None, embedder: Embedder | None = None) -> Brain:
    """The brain on one machine: SQLite for the log and every projection, the packaged embedder (`brain serve` and
    `brain mcp` pass one already loading on a thread: embedding.load_embedder)."""
    single_threaded_blas()
    settings.data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    settings.data_dir.chmod(0o700)  # owner-only, also when an older build made it readable to every local user
    # One model session, one thread per call: a request's call (recall's query, capture's duplicate check) takes
    # one core, and background indexing runs a call per core while no request runs (see Indexer).
    embedder = embedder or load_embedder(settings, threads=1)
    db = SQLiteDatabase(settings.database_path, synchronous=settings.sqlite_synchronous)
    read_model = SQLiteReadModel(db)
    vectors = SQLiteVectorIndex(db, embedder.model_id if embedder else "none", embedder.dimension if embedder else 0)
    try:
        store = SQLiteEventStore(db, projections=[SQLiteEntryProjection(), vectors])
        store.catch_up()
    except BaseException:  # a brain refused (a newer format, an event this build cannot read): left as it was
        db.close()
        raise
    brain = assemble(settings, clock or SystemClock(), store, read_model, vectors, embedder,
                     load_llm(settings), load_reranker(settings), db=db, foreground=Foreground(),
                     index_check=SQLiteIndexCheck(db, store, vectors), content_key=local_secret(settings.data_dir),
                     legacy_claims=True,  # a brain from before its secret named its claims by a plain hash
                     secret_store=SealedFileSecrets(settings.data_dir / "secrets", local_secret(settings.data_dir)))
    if brain.worker:
        vectors.on_pending = brain.worker.notify
    brain.import_parts = FolderParts(settings.data_dir / "imports")
    brain.watcher = folder_watcher(brain) if settings.watch_folders else None
    # each pass as long as a request's, so a stopping server waits for one pass at most
    brain.continuation = Continuation(lambda integration_id: brain.integrations.sync_changed(
        integration_id, seconds=brain.integrations.request_seconds))
    brain.integrations.on_incomplete = brain.continuation.ask
    return brain


def folder_watcher(brain: Brain) -> "FolderWatcher | None":
    """The watcher of the connected notes folders (the `local` extra's watchdog), told of every connect and
    disconnect; None where watchdog is not installed (the hourly sync still runs)."""
    try:
        from .adapters.integrations.watch import FolderWatcher as Watcher
    except ImportError:
        return None
    watcher = Watcher(brain.integrations.folders, brain.integrations.sync_changed)
    brain.integrations.on_change = watcher.refresh
    return watcher


def local_secret(data_dir: Path) -> bytes:
    """The brain's secret on one machine (what keys the claim streams' hashes of texts): 32 random bytes in
    `content.key` beside the database, made at the first start, readable by the owner alone. A backup of the
    database alone tells nobody which texts it ever held."""
    path = data_dir / "content.key"
    try:
        with path.open("xb") as made:  # exclusive: two first starts at once keep one secret
            os.fchmod(made.fileno(), 0o600)
            made.write(secrets.token_bytes(32))
    except FileExistsError:
        pass
    secret = path.read_bytes()
    if len(secret) != 32:
        raise ValueError(f"{path} is not a brain secret (32 bytes); restore it from a backup of the data folder")
    return secret


def single_threaded_blas() -> None:
    """numpy's matrix products on the calling thread alone, for the whole process. Recall's are small (MMR's
    similarities, 40 x 384), and OpenBLAS runs them on a pool whose idle threads then spin for a while: with a
    recall every 10 ms one of them never stopped, taking a core from the next request and the indexer (the
    100k bench brain served with one BLAS thread: the same p50, p95 1.2-1.5 ms lower)."""
    threadpool_limits(1, user_api="blas")


def assemble(settings: Settings, clock: Clock, store: EventStore, read_model: ReadModel, vectors: VectorIndex,
             embedder: Embedder | None, llm: LanguageModel,
             reranker: Reranker | None, db: SQLiteDatabase | None = None, worker: bool = True,
             background_classification: bool = True, foreground: Foreground | None = None,
             index_check: IndexCheck | None = None, index_at_capture: bool = False,
             content_key: bytes | Callable[[], bytes] | None = None,
             recall_tally: RecallTally | None = None, legacy_claims: bool = False,
             secret_store: SecretStore | None = None, local_folders: bool = True) -> Brain:
    """The application services over whichever adapters the deployment chose. `index_at_capture`: a capture
    stores its memory's vectors itself when it computed them all (where no worker runs: AWS). `content_key`: the
    brain's secret, keying the claim streams' hashes of texts. `recall_tally`: recalls noted there, folded into the
    log hourly, instead of appended one by one. `secret_store`: where integrations keep their secrets (none given:
    in memory, as the unit tests' brains do; a served brain passes one that lasts). `local_folders`: whether a notes
    folder on the brain's own machine may be connected (not on Lambda)."""
    ZoneInfo(settings.timezone)  # an unknown zone stops the start, with the zone named
    links = LinkService(store, read_model, clock, vectors if embedder else None)
    # On one machine, indexing runs on every core while no request does, and yields them to requests.
    indexer = (Indexer(vectors, embedder, on_indexed=links.infer, foreground=foreground,
                       threads=os.cpu_count() or 1) if embedder else None)
    config = SettingsService(store, clock, settings.timezone, fresh_for=settings.config_fresh_seconds)
    triage = Triage(read_model, vectors, indexer.embed, llm, config.duplicate_config,
                    catch_up=indexer.catch_up, prepare=indexer.prepare) if indexer else None
    has_model = not isinstance(llm, NoLanguageModel)
    # A configured model refines the rules' classification of each new memory, off the request path.
    classifier = (ThreadPoolExecutor(1, thread_name_prefix="classifier")
                  if has_model and background_classification else None)
    projects = ProjectService(store, read_model, clock)
    memories = MemoryService(store, clock, config.timezone, triage=triage, projects=projects,
                             llm=llm if has_model else None,
                             reads_when=lambda: config.value("REMINDERS_FROM_WORDS") == "capture",
                             content_key=content_key, recall_tally=recall_tally, legacy_claims=legacy_claims)
    team = TeamService(store, clock, owner(settings.owner_name), lambda: config.value("TEAM_DEFAULT_SHARE"),
                       erase_member=workspace_eraser(memories, projects, read_model))
    # A push endpoint's host is resolved and checked at subscribe time, before each send, and as the gateway connects.
    push_gateway = WebPushGateway(settings.push_contact, resolve=resolve, allow_loopback=settings.push_allow_loopback)
    push = PushService(store, read_model, clock, push_gateway, team, resolve, settings.push_allow_loopback)
    digests = DigestService(store, read_model, llm if has_model else None, clock, config.timezone)
    integrations = IntegrationService(store, memories, links, connectors(settings, folders=local_folders), clock,
                                      secret_store or InMemorySecrets(),
                                      request_seconds=settings.integration_request_seconds)
    # The nightly (and hourly) jobs: each module in app/maintenance/ is one, run in this order.
    maintenance = MaintenanceRunner(store, clock, [
        Housekeeping(store, clock, indexer),
        *([IndexVerification(store, index_check)] if index_check else []),
        GraphPass(store, clock, read_model, vectors if embedder else None, links),
        StalenessPass(store, clock),
        ExtractionJob(Extractor(store, clock, config.timezone, llm if has_model else None)),  # 14 days back only
        CompressionJob(digests, read_model, team.every_workspace, clock),
        PatternsJob(store, vectors if embedder else None, llm if has_model else None, clock, config.timezone),
        PushReminders(push),  # hourly
        IntegrationSync(integrations),  # hourly
        *([RecallFold(recall_tally, memories, clock, config.timezone)] if recall_tally else []),  # hourly
    ])
    at = parse_daily(settings.maintenance_at)
    capture_indexer = indexer if index_at_capture else None

    # What follows a capture that stored a memory or changed one (a merge, a replacement): its vectors, when the
    # capture computed them all (else the next pass finds it pending), and the model's classification, off the
    # request. A block appends nothing, so nothing follows it.
    def index(ctx: Context, memory_id: str) -> None:
        if capture_indexer:
            capture_indexer.index_captured(memory_id)

    def classify(ctx: Context, memory_id: str) -> None:
        if classifier:
            _submit(classifier, memories.classify_with_model, ctx, memory_id)

    for changed in (MemoryCaptured, MemoryRevised):
        memories.consequences.on(changed, *([index] if capture_indexer else []), *([classify] if classifier else []))
    requests = foreground or Foreground()
    return Brain(
        settings=settings,
        db=db,
        store=store,
        vectors=vectors,
        memories=memories,
        queries=MemoryQueries(read_model, store, vectors, clock, settings.vectorize_grace_ms),
        brief=BriefService(read_model, vectors, clock, settings.vectorize_grace_ms),
        graph=GraphView(read_model),
        recall=RecallService(read_model, vectors, embedder, clock, config.recall_config, reranker=reranker,
                             lexicon=english_words()),
        config=config,
        team=team,
        links=links,
        projects=projects,
        transfer=Transfer(store, read_model, clock, settings.import_request_seconds),
        llm=llm,
        indexer=indexer,
        # Embedding a brain's worth of texts leaves freed heap behind: it goes back once the queue is empty.
        worker=IndexingWorker(indexer, on_drained=release_freed_memory) if indexer and worker else None,
        owner=team.owner,
        maintenance=maintenance,
        push=push,
        digests=digests,
        patterns=PatternService(store, memories, clock, team.note_pattern),
        conflicts=ConflictReview(store, clock, memories.store_note),
        integrations=integrations,
        classifier=classifier,
        foreground=requests,
        counts=CountingLane(memories.counting, requests),
        scheduler=MaintenanceScheduler(maintenance, config.timezone, at) if at else None,
        release_memory=release_freed_memory,
    )


def connectors(settings: Settings, folders: bool = True) -> dict[str, Connector]:
    """The integrations this deployment can connect: every connector module in adapters/integrations/ (its registry
    finds them: a mailbox, a calendar feed, a CalDAV server, Notion, a notes folder, ...), each made for these
    settings. A notes folder only where the brain runs on someone's machine (`folders`; on Lambda a folder would be
    the function's own disk: known there, and refused in words). Every connector but the folder reaches only hosts on
    the internet (adapters/http/guarded.py: no private, loopback or metadata address, unless a test allows
    loopback)."""
    return connector_modules.connectors(settings, local=folders)


def _submit(executor: ThreadPoolExecutor, task: Callable[..., object], *args: object) -> None:
    def run() -> None:
        try:
            task(*args)
        except Exception:  # a failed refinement leaves the rules' classification in place
            log.exception("classifying with the language model failed")

    executor.submit(run)


def load_llm(settings: Settings) -> LanguageModel:
    """The configured language model; without one, callers use their deterministic fallbacks."""
    if settings.llm == "none":
        return NoLanguageModel()
    if settings.llm == "bedrock":
        import boto3

        from .adapters.llm.bedrock import BedrockConverseModel

        return BedrockConverseModel(boto3.client("bedrock-runtime"), settings.llm_model)
    key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else None
    return OpenAICompatibleModel(settings.llm_base_url, settings.llm_model, key, settings.llm_timeout)


def load_reranker(settings: Settings) -> Reranker | None:
    """The user's cross-encoder, behind a /rerank endpoint or an ONNX file, if one is configured and loads; recall
    works without it."""
    if settings.reranker == "http":
        from .adapters.reranker.http import HttpReranker

        key = settings.reranker_api_key.get_secret_value() if settings.reranker_api_key else None
        return HttpReranker(settings.reranker_url, settings.reranker_model, settings.reranker_style, key)
    if settings.reranker_dir is None:
        return None
    from .adapters.reranker.onnx import OnnxCrossEncoder

    try:
        # Calls that timed out may still be running beside a live one: they share the cores, not each take all.
        return OnnxCrossEncoder(settings.reranker_dir, threads=max(1, (os.cpu_count() or 2) // RERANK_CALLS))
    except Exception as exc:  # noqa: BLE001 - a broken model file must not stop the brain from serving
        log.error("the reranker at %s is unavailable: %s", settings.reranker_dir, exc)
        return None


def replay(settings: Settings) -> tuple[int, int]:
    """Every projection of the brain in `settings` dropped and rebuilt from its log: (events replayed,
    projections rebuilt)."""
    brain = build(settings)
    try:
        store = _local_store(brain)
        return store.rebuild_projections(), len(store.projections)
    finally:
        brain.close()


def materialise(origin: Settings, copy: Path, until: int, progress: Callable[[int, int], None]) -> int:
    """A new brain in `copy` holding the log of the brain in `origin` up to `until` (positions and erasures kept;
    the origin is only read), its projections rebuilt; the events it holds. `progress(events read, in the log)`."""
    brain = build(Settings(data_dir=copy, timezone=origin.timezone))
    try:
        for read, total in copy_log(origin.database_path, brain.db, until):
            progress(read, total)
        return _local_store(brain).rebuild_projections()
    finally:
        brain.close()


def _local_store(brain: Brain) -> SQLiteEventStore:
    """The log of a brain `build` made: SQLite, with the projections it applies."""
    assert isinstance(brain.store, SQLiteEventStore)
    return brain.store


def resolve_token(settings: Settings) -> tuple[str, bool]:
    """The owner token: from the environment, else the saved one, else a new one saved owner-only."""
    if settings.auth_token is not None and settings.auth_token.get_secret_value().strip():
        return settings.auth_token.get_secret_value().strip(), False
    path = settings.token_path
    if path.exists():
        return path.read_text().strip(), False
    token = secrets.token_urlsafe(32)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(token + "\n")
    return token, True
