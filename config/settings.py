"""Settings, driven by the environment (see .env.example and docs/operations.md).

Embedded default: SQLite, a Celery broker in a SQLite file of its own and a
local-memory cache under DATA_DIR, so one command runs everything on a fresh machine.
DATABASE_URL / REDIS_URL switch to PostgreSQL / Redis for production.
"""

import ipaddress
import os
import secrets
from datetime import timedelta
from pathlib import Path

import environ

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env", overwrite=False)

DATA_DIR = Path(env.str("DATA_DIR", default=str(BASE_DIR / "var"))).resolve()


def _owner_only(directory: Path) -> None:
    """Keys, the embedded database and uploaded files live in DATA_DIR: readable by this user only.

    A directory made by an earlier version (0755, its database 0644) or by hand is tightened at every
    start, with its files; one this user cannot change stops the service (helpdesk.E003)."""
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    entries = [directory, *(entry for entry in directory.iterdir() if entry.is_file() and not entry.is_symlink())]
    for path in entries:
        try:
            mode = path.lstat().st_mode & 0o7777
            if mode & 0o077:
                path.chmod(mode & 0o7700)
        except FileNotFoundError:
            pass  # a SQLite -wal file gone meanwhile
        except PermissionError:
            pass  # not this user's: the check says so


_owner_only(DATA_DIR)


def _generated_once(name: str) -> str:
    """A random key kept in DATA_DIR, so sessions, tokens and signed URLs survive restarts."""
    path = DATA_DIR / name
    if not path.exists():
        path.touch(mode=0o600)
        path.write_text(secrets.token_urlsafe(50))
    return path.read_text().strip()


SECRET_KEY = env.str("SECRET_KEY", default="") or _generated_once("secret_key")
# A key generated into DATA_DIR is per machine: with a shared database (several machines) sessions,
# signed URLs and panel tokens would hold on one machine only (helpdesk.E001 refuses that).
KEYS_FROM_ENVIRONMENT = bool(env.str("SECRET_KEY", default="")) and bool(env.str("JWT_SIGNING_KEY", default=""))
DEBUG = env.bool("DEBUG", default=False)
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]", "testserver"])

INSTALLED_APPS = [
    "helpdesk.admin_config.HelpdeskAdminConfig",  # django.contrib.admin with the login limits (helpdesk.admin_site)
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework_simplejwt.token_blacklist",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "foundation",  # the infrastructure every app stands on: its deployment checks and signal hooks
    "api_framework",  # what every API door is built on: registers the OpenAPI extensions
    "helpdesk",
    "sla",  # business hours (issue 23): below tickets, which will ask it for deadlines
    "tickets",
    "macros",  # canned replies with actions (issue 24): above tickets, whose services apply them
    "integrations",
]

MIDDLEWARE = [
    # First: every response, static files and early refusals included, gets its request id and log line.
    "foundation.request_log.RequestLogMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "foundation.metrics.middleware.RequestMetricsMiddleware",  # counts and times every request (no query)
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    # The admin's files stream like the API's, before the CSRF check reads the form.
    "tickets.attachments.uploads.AdminUploadStreamingMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "helpdesk.audit.AuditContextMiddleware",  # who and from where, for the audit records made below
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
APPEND_SLASH = False

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Database -------------------------------------------------------------
if env.str("DATABASE_URL", default=""):
    DATABASES = {"default": env.db_url("DATABASE_URL")}
    # Persistent connections (checked before reuse): a new PostgreSQL connection per request
    # or per Celery task costs more than the request itself.
    DATABASES["default"].setdefault("CONN_MAX_AGE", env.int("DB_CONN_MAX_AGE", default=600))
    DATABASES["default"].setdefault("CONN_HEALTH_CHECKS", True)
    if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
        # The same backend, without a health-check round trip on a connection busy a moment ago.
        DATABASES["default"]["ENGINE"] = "foundation.db.postgresql"
    _options = DATABASES["default"].setdefault("OPTIONS", {})
    # A database that does not answer fails a request in seconds instead of holding it
    # (2 s is the least libpq and psycopg accept; a live server, even a busy one, answers in milliseconds).
    _options.setdefault("connect_timeout", env.int("DB_CONNECT_TIMEOUT", default=2))
    # No statement may hold a web worker for long: the web process (config/wsgi.py) sets
    # DB_STATEMENT_TIMEOUT_MS; workers, beat and commands (migrations) are not bounded.
    if env.int("DB_STATEMENT_TIMEOUT_MS", default=0):
        _options["options"] = f"-c statement_timeout={env.int('DB_STATEMENT_TIMEOUT_MS')}"
        # The server enforces statement_timeout; a frozen server or a dropped network does not,
        # so the client stops waiting for any answer a second later (foundation.db.postgresql); 0 turns it off.
        _answer_timeout = env.float("DB_ANSWER_TIMEOUT", default=env.int("DB_STATEMENT_TIMEOUT_MS") / 1000 + 1)
        if _answer_timeout > 0:
            DATABASES["default"]["ANSWER_TIMEOUT"] = _answer_timeout
        # A statement unanswered this long makes the client check that the server still answers a new
        # connection (a busy one does, a frozen one does not) and wait as long for it; 0 turns it off.
        _probe_after = env.float("DB_PROBE_AFTER", default=1.0)
        if _probe_after > 0:
            DATABASES["default"]["PROBE_AFTER"] = _probe_after
    # Every process: a peer that stopped acknowledging (a dropped network) breaks the
    # connection after 30 s, not after the kernel's 15 minutes of retransmissions.
    _options.setdefault("tcp_user_timeout", env.int("DB_TCP_USER_TIMEOUT_MS", default=30_000))
    _options.setdefault("keepalives_idle", 30)
    _options.setdefault("keepalives_interval", 10)
    _options.setdefault("keepalives_count", 3)
else:
    _SQLITE_FILE = DATA_DIR / "db.sqlite3"
    if not _SQLITE_FILE.exists():
        _SQLITE_FILE.touch(mode=0o600)  # SQLite gives its -wal and -shm files the same permissions
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": _SQLITE_FILE,
            "OPTIONS": {
                # Writers take the lock at BEGIN, so concurrent writers queue
                # instead of failing with "database is locked" mid-transaction.
                "transaction_mode": "IMMEDIATE",
                "timeout": 30,
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            },
        }
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_USER_MODEL = "helpdesk.User"
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# --- Cache, broker --------------------------------------------------------
REDIS_URL = env.str("REDIS_URL", default="")
if REDIS_URL:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}}
else:
    # One web process with threads in the embedded mode, so this cache is shared
    # by every request that counts against a rate limit.
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "helpdesk"}}
    # django-ratelimit wants a shared cache; the embedded mode runs one web
    # process, whose local-memory cache every request thread shares.
    SILENCED_SYSTEM_CHECKS = ["django_ratelimit.E003", "django_ratelimit.W001"]
# A check silenced on purpose (the test harnesses' loopback receivers: integrations.E002).
SILENCED_SYSTEM_CHECKS = [*globals().get("SILENCED_SYSTEM_CHECKS", []), *env.list("SILENCED_SYSTEM_CHECKS", default=[])]

CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default="") or REDIS_URL or f"sqlite:///{DATA_DIR / 'broker.sqlite3'}"
if CELERY_BROKER_URL.startswith("sqlite:"):
    # The embedded broker: kombu's SQLAlchemy transport on a SQLite file, made safe for the
    # several processes that share it (foundation/broker.py).
    CELERY_BROKER_TRANSPORT = "foundation.broker:Transport"
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        # With prefetch 1 a worker waits a whole polling interval whenever its pool is full,
        # and an idle worker looks for a new message this often.
        "polling_interval": env.float("BROKER_POLLING_INTERVAL", default=0.1),
    }
else:
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "visibility_timeout": 3600,
        # Publishing happens after an agent's action commits, in the request:
        # with the broker down, give up fast (the dispatcher re-queues later)
        # instead of kombu's default of retrying the connection forever.
        "max_retries": 1,
        "interval_start": 0,
        "interval_step": 0.5,
        "interval_max": 1,
        "socket_connect_timeout": 3,
    }

# config/celery.py manages the database connections of tasks as Django does those of requests;
# Celery's Django fixup must not close them around every task.
CELERY_DB_REUSE_MAX = 2**31
# Worker processes: one more than the cores, so one waiting on the database does not leave a core idle
# (measured best on 2 cores by `make bench`). Webhook attempts, which wait on receivers far longer than
# they compute, run on threads of each process (WEBHOOK_SEND_THREADS, integrations/tasks.py).
CELERY_WORKER_CONCURRENCY = env.int("CELERY_CONCURRENCY", default=(os.cpu_count() or 1) + 1)
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_IGNORE_RESULT = True
CELERY_BEAT_SCHEDULE_FILENAME = str(DATA_DIR / "celerybeat-schedule")
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_CONNECTION_TIMEOUT = 3
# Reconnects to a broker that was down every second, not after up to 30 s (config/celery.py).
CELERY_WORKER_CONSUMER = "config.celery:Consumer"
CELERY_BEAT_SCHEDULE = {
    "dispatch-due-webhook-deliveries": {
        "task": "integrations.dispatch_due_deliveries",
        "schedule": env.float("WEBHOOK_DISPATCH_INTERVAL", default=2.0),
    },
    "purge-idempotency-records": {"task": "integrations.purge_idempotency_records", "schedule": 3600.0},
    "flush-expired-panel-tokens": {"task": "helpdesk.flush_expired_tokens", "schedule": 3600.0},
    "purge-expired-events": {"task": "integrations.purge_expired_events", "schedule": 600.0},
    "purge-expired-tombstones": {"task": "tickets.purge_expired_tombstones", "schedule": 600.0},
    "deactivate-failing-webhooks": {"task": "integrations.deactivate_failing_webhooks", "schedule": 3600.0},
    "sweep-attachment-files": {"task": "tickets.sweep_attachment_files", "schedule": 3600.0},
    "recount-ticket-counts": {"task": "tickets.recount_ticket_counts", "schedule": 600.0},
    "retarget-sla-deadlines": {"task": "tickets.retarget_sla_deadlines", "schedule": 30.0},
    # Every 20 s: an SLA event leaves within 60 s of its moment even when a run waits behind another task.
    "announce-sla-deadlines": {"task": "tickets.announce_sla_deadlines", "schedule": 20.0},
    "purge-expired-audit-records": {"task": "helpdesk.purge_expired_audit_records", "schedule": 3600.0},
}
# Organizations whose ticket counters one run of recount-ticket-counts checks (the oldest checked first).
TICKET_RECOUNT_BATCH = env.int("TICKET_RECOUNT_BATCH", default=50)

# --- I18N, time -----------------------------------------------------------
LANGUAGE_CODE = "pt-br"
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

# --- Files ----------------------------------------------------------------
STATIC_URL = "static/"
STATIC_ROOT = DATA_DIR / "static"
STATIC_ROOT.mkdir(exist_ok=True)
MEDIA_ROOT = DATA_DIR / "media"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
# Uploads (avatars) are served only through signed URLs: readable by this user only.
FILE_UPLOAD_PERMISSIONS = 0o600
FILE_UPLOAD_DIRECTORY_PERMISSIONS = 0o700
# The key and the webhook secret shown once in the admin travel in the server-side session, never in a cookie.
MESSAGE_STORAGE = "django.contrib.messages.storage.session.SessionStorage"
API_MAX_BODY_BYTES = 1024 * 1024
DATA_UPLOAD_MAX_MEMORY_SIZE = API_MAX_BODY_BYTES
AVATAR_URL_MAX_AGE = 30 * 60
# Agent photos (admin and create_agent): stored under their real format's extension, at most this size.
AVATAR_MAX_BYTES = env.int("AVATAR_MAX_BYTES", default=2 * 1024 * 1024)

# --- Attachments (tickets.attachments; docs/operations.md, "Attachment storage") ---
# The largest file, counted while it streams to a temporary file (413 past it), and how many a ticket holds.
ANEXO_MAX_BYTES = env.int("ANEXO_MAX_BYTES", default=10 * 1024 * 1024)
ANEXOS_POR_TICKET = env.int("ANEXOS_POR_TICKET", default=50)
# Bytes of attachments an organization may hold (0: no quota); past it an upload is a 413 on `arquivo`.
ANEXOS_QUOTA_BYTES = env.int("ANEXOS_QUOTA_BYTES", default=5 * 1024**3)
# Free bytes the attachments' disk keeps: below it an upload is a 503 before anything is written
# (filesystem storage only; the embedded database shares that disk).
ANEXOS_MIN_FREE_BYTES = env.int("ANEXOS_MIN_FREE_BYTES", default=1024**3)
ATTACHMENT_URL_MAX_AGE = 30 * 60  # the service's own signed download link
ATTACHMENT_PRESIGNED_MAX_AGE = 5 * 60  # object storage: the presigned URL that link redirects to
# Object storage when a bucket is named (django-storages' S3Storage with one boto3 session per process:
# AWS S3 or any S3-compatible server); else files under DATA_DIR/attachments. Keys are random, never the file's name.
AWS_STORAGE_BUCKET_NAME = env.str("AWS_STORAGE_BUCKET_NAME", default="")
if AWS_STORAGE_BUCKET_NAME:
    from boto3.s3.transfer import TransferConfig

    STORAGES["attachments"] = {
        "BACKEND": "tickets.attachments.object_storage.ObjectStorage",
        "OPTIONS": {
            "bucket_name": AWS_STORAGE_BUCKET_NAME,
            "location": env.str("AWS_LOCATION", default="anexos"),
            # Unset: boto3 finds credentials and region itself (instance role, ~/.aws, its own variables).
            "endpoint_url": env.str("AWS_S3_ENDPOINT_URL", default="") or None,
            "access_key": env.str("AWS_ACCESS_KEY_ID", default="") or None,
            "secret_key": env.str("AWS_SECRET_ACCESS_KEY", default="") or None,
            "region_name": env.str("AWS_S3_REGION_NAME", default="") or None,
            "addressing_style": env.str("AWS_S3_ADDRESSING_STYLE", default="") or None,
            "signature_version": "s3v4",
            "default_acl": None,  # the bucket's own (private) policy
            "querystring_auth": True,
            "querystring_expire": ATTACHMENT_PRESIGNED_MAX_AGE,
            "file_overwrite": False,
            # One PUT streamed from the upload's temporary file: boto3's multipart upload of a seekable
            # file reads each 8 MiB part into memory (several at once), a web process must not.
            "transfer_config": TransferConfig(multipart_threshold=ANEXO_MAX_BYTES + 1, use_threads=False),
        },
    }
else:
    STORAGES["attachments"] = {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {
            "location": DATA_DIR / "attachments",
            "file_permissions_mode": 0o600,
            "directory_permissions_mode": 0o700,
        },
    }

# --- REST framework -------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_RENDERER_CLASSES": ["api_framework.renderers.EnvelopeRenderer"],
    "DEFAULT_PARSER_CLASSES": ["api_framework.parsers.JSONObjectParser"],
    "DEFAULT_AUTHENTICATION_CLASSES": [],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_THROTTLE_CLASSES": [],
    "UNAUTHENTICATED_USER": None,
    "EXCEPTION_HANDLER": "api_framework.exception_handler.envelope_exception_handler",
    "DATETIME_FORMAT": "iso-8601",
    "DEFAULT_SCHEMA_CLASS": "api_framework.schema.EnvelopeAutoSchema",
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Help-desk: API de parceiros (v1) e API do painel",
    "DESCRIPTION": "Toda resposta usa o envelope {success, message, data, errors}.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.AllowAny"],
    "SERVE_AUTHENTICATION": [],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "POSTPROCESSING_HOOKS": [
        "integrations.api.event_schemas.webhooks_postprocess",
        "drf_spectacular.hooks.postprocess_schema_enums",
        "api_framework.schema.postprocess",
    ],
    # Names of the enum components (the hook names them after the field otherwise, with collisions).
    "ENUM_NAME_OVERRIDES": {
        "Prioridade": "tickets.models.Priority",
        "CategoriaDoStatus": "tickets.models.StatusCategory",
        "Canal": "tickets.models.Channel",
        "OrigemDaResposta": "tickets.models.ReplyOrigin",
        "TipoDoAutor": [("agente", "Atendente"), ("cliente", "Cliente")],
        "Evento": "integrations.models.EventKind",
        "EventoAssinavel": "integrations.models.SUBSCRIBABLE_EVENTS",
        "SituacaoDaEntrega": "integrations.models.DeliveryStatus",
        "EstadoDaDependencia": ["ok"],
        "Sucesso": [(True, True)],
        "Falha": [(False, False)],
        "MensagemDeValidacao": ["Erro de validação"],
        "TipoDoAnexo": "tickets.attachments.content.SERVED_TYPES",
        "TipoDoCampo": "tickets.models.CustomFieldType",
    },
}

# --- Panel login (JWT) ----------------------------------------------------
SIMPLE_JWT = {
    "ALGORITHM": "HS256",
    # A key of its own: leaking or rotating SECRET_KEY does not touch panel tokens.
    "SIGNING_KEY": env.str("JWT_SIGNING_KEY", default="") or _generated_once("jwt_signing_key"),
    "ACCESS_TOKEN_LIFETIME": timedelta(minutes=15),
    "REFRESH_TOKEN_LIFETIME": timedelta(days=7),
    "ROTATE_REFRESH_TOKENS": True,
    "BLACKLIST_AFTER_ROTATION": True,
    # Tokens carry a digest of the password hash: a password change revokes them at once.
    "CHECK_REVOKE_TOKEN": True,
    "CHECK_USER_IS_ACTIVE": True,
    "AUTH_HEADER_TYPES": ("Bearer",),
    "USER_ID_FIELD": "id",
    "USER_ID_CLAIM": "user_id",
    "UPDATE_LAST_LOGIN": False,
    "LEEWAY": 0,
}
LOGIN_RATE_LIMIT = env.str("LOGIN_RATE_LIMIT", default="10/m")
# Failed logins of one account from one client address (IPv6: its /64), through the API or the admin;
# past it that address is refused for that account, even the right password (helpdesk.login_limits).
LOGIN_ACCOUNT_RATE_LIMIT = env.str("LOGIN_ACCOUNT_RATE_LIMIT", default="20/h")
# Failed logins of one account from every address. Never refuses on its own: past it the account is under
# attack, and an address that has not logged in to it in 30 days gets LOGIN_NEW_ADDRESS_RATE_LIMIT failures.
LOGIN_ACCOUNT_ALERT_RATE = env.str("LOGIN_ACCOUNT_ALERT_RATE", default="20/h")
LOGIN_NEW_ADDRESS_RATE_LIMIT = env.str("LOGIN_NEW_ADDRESS_RATE_LIMIT", default="5/h")
# With the cache down, logins are refused (a limiter that cannot count does not protect passwords).
LOGIN_RATELIMIT_FAIL_OPEN = env.bool("LOGIN_RATELIMIT_FAIL_OPEN", default=False)
PANEL_RATE_LIMIT = env.str("PANEL_RATE_LIMIT", default="300/m")

# --- Partner API ----------------------------------------------------------
PARTNER_RATE_LIMIT = env.str("PARTNER_RATE_LIMIT", default="120/m")
# Requests of one organization in flight at once, across web processes (the shared cache counts them);
# past it a 429 at once, so one organization's burst leaves the other processes to the others. 0: no limit.
PARTNER_MAX_CONCURRENT_REQUESTS = env.int("PARTNER_MAX_CONCURRENT_REQUESTS", default=3)
# Partner requests the web tier runs at once without one slowing another: its cores. While several
# organizations call (each made a request in the last IN_FLIGHT_CALLING_SECONDS), the last free core goes
# only to an organization within its even part of these (at least 1, at most the limit above), so a burst
# of one never takes the others' cores; the cores before it are anyone's.
PARTNER_CONCURRENT_REQUESTS = env.int("PARTNER_CONCURRENT_REQUESTS", default=os.cpu_count() or 1)
IN_FLIGHT_CALLING_SECONDS = env.float("IN_FLIGHT_CALLING_SECONDS", default=2.0)
IN_FLIGHT_TTL_SECONDS = env.int("WEB_TIMEOUT", default=30) + 5
RATELIMIT_USE_CACHE = "default"
# A cache outage must not take the partner API down with it: fail open.
RATELIMIT_FAIL_OPEN = env.bool("RATELIMIT_FAIL_OPEN", default=True)
CREDENTIAL_LAST_USED_RESOLUTION = 60  # seconds between writes of ultimo_uso_em
API_KEYS_PER_ORGANIZATION = env.int("API_KEYS_PER_ORGANIZATION", default=20)  # active ones
# Partner requests without a valid key, per client address (a key guessed or scanned for).
PARTNER_UNAUTHENTICATED_RATE_LIMIT = env.str("PARTNER_UNAUTHENTICATED_RATE_LIMIT", default="60/m")
# Public routes, per client address: the OpenAPI document (some 200 KB an answer) and the health probe
# (a query and a broker round trip; a load balancer polling every second spends 60 a minute).
SCHEMA_RATE_LIMIT = env.str("SCHEMA_RATE_LIMIT", default="30/m")
HEALTH_RATE_LIMIT = env.str("HEALTH_RATE_LIMIT", default="600/m")
# Seconds after a request or task during which its database connection is reused without a
# health-check round trip (foundation.db.postgresql).
DB_HEALTH_CHECK_GRACE = env.float("DB_HEALTH_CHECK_GRACE", default=5.0)

# --- Webhooks -------------------------------------------------------------
# Development and tests: http:// and loopback receivers (this machine). Never in production.
WEBHOOK_ALLOW_INSECURE_URLS = env.bool("WEBHOOK_ALLOW_INSECURE_URLS", default=False)
# Development only, and refused by a system check with DEBUG off: private, link-local and metadata
# addresses (a webhook could then reach internal services).
WEBHOOK_ALLOW_PRIVATE_NETWORKS_UNSAFE = env.bool("WEBHOOK_ALLOW_PRIVATE_NETWORKS_UNSAFE", default=False)
WEBHOOK_RETRY_DELAYS = [
    int(s) for s in env.list("WEBHOOK_RETRY_DELAYS", default=["60", "300", "1800", "7200", "21600", "43200", "86400"])
]
# Events (with their deliveries and attempts) older than this are purged; the feed answers 410 for them.
EVENT_RETENTION_DAYS = env.int("EVENT_RETENTION_DAYS", default=30)
# The audit trail (GET /api/auditoria) keeps a year; older records are purged hourly in batches.
AUDIT_RETENTION_DAYS = env.int("AUDIT_RETENTION_DAYS", default=365)
# A webhook whose deliveries have all failed for this many days in a row is turned off (integrations/health.py).
WEBHOOK_DISABLE_AFTER_DAYS = env.int("WEBHOOK_DISABLE_AFTER_DAYS", default=5)
WEBHOOK_TIMEOUT = env.float("WEBHOOK_TIMEOUT", default=10.0)
# Seconds before the dispatcher queues again a delivery whose message never arrived
# (lost inside the broker; a message the broker refused is due at once).
WEBHOOK_REQUEUE_AFTER = env.float("WEBHOOK_REQUEUE_AFTER", default=10.0)
# Seconds a claimed delivery stays claimed without its worker renewing it (integrations/leases.py):
# how long a worker that died holds the deliveries it was sending.
WEBHOOK_LEASE = env.float("WEBHOOK_LEASE", default=6.0)
# Fair delivery (docs/decisions.md): each worker process sends this many attempts at once, on threads (a
# receiver's wait holds a thread, not a process); at most WEBHOOK_MAX_IN_FLIGHT attempts of one webhook run
# at a time, the rest wait their turn (parked) and go as soon as one ends.
WEBHOOK_SEND_THREADS = env.int("WEBHOOK_SEND_THREADS", default=8)
WEBHOOK_MAX_IN_FLIGHT = env.int("WEBHOOK_MAX_IN_FLIGHT", default=2)
# A webhook whose last attempt failed or took at least this long is slow: its attempts may take at
# most WEBHOOK_SLOW_SHARE of a worker process's send threads, the rest stay for the healthy ones.
WEBHOOK_SLOW_SECONDS = env.float("WEBHOOK_SLOW_SECONDS", default=2.0)
WEBHOOK_SLOW_SHARE = env.float("WEBHOOK_SLOW_SHARE", default=0.5)

# --- Logs (foundation/logs.py; docs/operations.md, "Logs") ----------------------
# json: one JSON object a line (production); console: readable lines (`make run` sets it).
LOG_FORMAT = env.str("LOG_FORMAT", default="json")
# Servers log to stdout; manage.py sets stderr, so a command's stdout stays its answer (--json).
LOG_STREAM = env.str("LOG_STREAM", default="stdout")
if LOG_STREAM not in ("stdout", "stderr"):
    raise ValueError(f"LOG_STREAM must be stdout or stderr, not {LOG_STREAM!r}")
LOGGING_CONFIG = "foundation.logs.configure"
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"structured": {"()": "foundation.logs.formatter", "log_format": LOG_FORMAT}},
    "filters": {"route_instead_of_path": {"()": "foundation.logs.RouteInsteadOfPath"}},
    "handlers": {
        "console": {"class": "logging.StreamHandler", "formatter": "structured", "stream": f"ext://sys.{LOG_STREAM}"}
    },
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    "loggers": {
        "django.request": {
            "handlers": ["console"],
            "level": "ERROR",
            "propagate": False,
            "filters": ["route_instead_of_path"],
        },
        # Two lines per task ("received", "succeeded") at hundreds of deliveries a second:
        # failures still show, and every delivery attempt is in the delivery log.
        "celery.worker.strategy": {"level": env.str("CELERY_TASK_LOG_LEVEL", default="WARNING")},
        "celery.app.trace": {"level": env.str("CELERY_TASK_LOG_LEVEL", default="WARNING")},
    },
}

SESSION_COOKIE_HTTPONLY = True
SECURE_CONTENT_TYPE_NOSNIFF = True
# Production sits behind a TLS-terminating proxy: trust its X-Forwarded-Proto,
# send cookies only over https, and ask browsers to stay on https.
if env.bool("BEHIND_TLS_PROXY", default=False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=31536000)
    # Both are promises about the whole domain: the operator makes them (docs/operations.md).
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=False)
    SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=False)
    # Plain http reaching the app is redirected, except the probes a load balancer sends straight to it.
    SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=True)
    SECURE_REDIRECT_EXEMPT = [r"^api/health$", r"^metrics$"]
    CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])
# Where the client address comes from for per-address limits (login): REMOTE_ADDR,
# or a header the proxy sets and clients cannot, e.g. HTTP_X_REAL_IP.
RATELIMIT_IP_META_KEY = env.str("CLIENT_IP_META_KEY", default="REMOTE_ADDR")
# The peers whose CLIENT_IP_META_KEY header is believed (addresses or CIDRs, comma separated): gunicorn
# binds every interface, so from anyone else the header is a forgery and the socket address counts.
# Loopback by default (a proxy on the same machine); a proxy on another machine is named here.
TRUSTED_PROXIES = env.list("TRUSTED_PROXIES", default=["127.0.0.0/8", "::1"])
for _proxy in TRUSTED_PROXIES:
    try:
        ipaddress.ip_network(_proxy.strip(), strict=False)
    except ValueError:  # a typo stops the service rather than silently trusting no one
        raise ValueError(f"TRUSTED_PROXIES: {_proxy!r} is not an address or a network") from None

# --- Metrics (docs/operations.md, "Metrics") ----------------------------------
# GET /metrics answers only with `Authorization: Bearer <METRICS_TOKEN>`; unset, it is a 404. With DEBUG
# off it must be at least 32 characters (helpdesk.E002): it guards an endpoint open to every client.
METRICS_TOKEN = env.str("METRICS_TOKEN", default="")
# Where a Celery worker serves its own GET /metrics (same token); 0: not served. One port per worker.
WORKER_METRICS_PORT = env.int("WORKER_METRICS_PORT", default=0)
# The interface it listens on: this machine only, unless Prometheus scrapes from another (then the
# worker machine's private address, or 0.0.0.0 behind a firewall).
WORKER_METRICS_ADDRESS = env.str("WORKER_METRICS_ADDRESS", default="127.0.0.1")
