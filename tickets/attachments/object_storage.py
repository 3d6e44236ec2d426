"""The attachments' storage when a bucket is named: django-storages' S3Storage with one boto3 session
per process.

S3Storage opens a new boto3 session for each thread's first call, and each session parses the S3
service model again: about 13 MB of a web process's peak memory per thread (4 threads, 4 copies). The
threads here share one session, created and asked for resources under a lock (a boto3 session is not
thread-safe); each thread still gets a resource of its own, as boto3 asks.
"""

import threading

from storages.backends.s3 import S3Storage


# Private django-storages API: test_the_web_threads_share_one_session_and_each_has_its_own_connection
class ObjectStorage(S3Storage):
    def __init__(self, **settings):
        super().__init__(**settings)
        self._session_lock = threading.RLock()
        self._shared_session = None

    def __getstate__(self):
        state = super().__getstate__()
        state.pop("_session_lock", None)
        state.pop("_shared_session", None)
        return state

    def __setstate__(self, state):
        super().__setstate__(state)
        self._session_lock = threading.RLock()
        self._shared_session = None

    def _create_session(self):
        with self._session_lock:
            if self._shared_session is None:
                self._shared_session = super()._create_session()
            return self._shared_session

    @property
    def connection(self):
        if getattr(self._connections, "connection", None) is None:
            with self._session_lock:
                return super().connection
        return self._connections.connection

    @property
    def unsigned_connection(self):
        if getattr(self._unsigned_connections, "connection", None) is None:
            with self._session_lock:
                return super().unsigned_connection
        return self._unsigned_connections.connection
