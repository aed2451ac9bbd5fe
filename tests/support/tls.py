"""One TLS context for the suite's HTTP clients. httpx loads certifi's certificates afresh for every client it makes
(20-30 ms of CPU each, a tenth of the suite's test processes' time once), and the suite makes thousands, most to
plain HTTP on loopback: a server being waited for is asked every 50 ms."""

import httpx

CONTEXT = httpx.create_ssl_context()
