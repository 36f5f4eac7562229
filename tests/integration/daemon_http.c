/* SPDX-License-Identifier: MIT */
/*
 * A minimal HTTP client and port finder for the allocinfod tests, so that they need
 * neither curl nor python. Loopback only; every step has a timeout.
 *
 *   daemon_http port                 prints a free TCP port on 127.0.0.1
 *   daemon_http get PORT PATH        GET http://127.0.0.1:PORT/PATH; prints the body,
 *                                    exits 0 on status 200, 1 on another status,
 *                                    2 when there is no answer
 *   daemon_http raw PORT             sends stdin (up to 1 MiB) as the request,
 *                                    prints the answer
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define TIMEOUT_MS 10000
#define MAX_ANSWER (16 << 20)
#define RAW_MAX (1 << 20)

static int connect_to(int port)
{
	struct sockaddr_in a;
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct timeval tv = {TIMEOUT_MS / 1000, 0};

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons((unsigned short)port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static int send_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Reads the whole answer (the server closes the connection). */
static char *read_all(int fd, size_t *len)
{
	char *buf = malloc(MAX_ANSWER + 1);
	size_t got = 0;

	if (!buf)
		return NULL;
	for (;;) {
		ssize_t r = recv(fd, buf + got, MAX_ANSWER - got, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			free(buf);
			return NULL;
		}
		if (r == 0 || got + (size_t)r == MAX_ANSWER)
			break;
		got += (size_t)r;
	}
	buf[got] = '\0';
	*len = got;
	return buf;
}

static int free_port(void)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) != 0)
		return 1;
	printf("%d\n", ntohs(a.sin_port));
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	char req[2048], *raw = NULL;
	size_t len;
	char *answer;
	int fd;

	if (argc == 2 && strcmp(argv[1], "port") == 0)
		return free_port();
	if (argc == 4 && strcmp(argv[1], "get") == 0) {
		int n = snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n",
				 argv[3]);
		if (n < 0 || (size_t)n >= sizeof(req))
			return 2;
		len = (size_t)n;
	} else if (argc == 3 && strcmp(argv[1], "raw") == 0) {
		raw = malloc(RAW_MAX);
		if (!raw)
			return 2;
		len = fread(raw, 1, RAW_MAX, stdin);
	} else {
		fprintf(stderr, "usage: daemon_http port | get PORT PATH | raw PORT\n");
		return 2;
	}
	fd = connect_to(atoi(argv[2]));
	if (fd < 0) {
		free(raw);
		return 2;
	}
	/* The server may answer and close before reading all of a long request. */
	if (send_all(fd, raw ? raw : req, len) != 0 && !raw)
		return 2;
	answer = read_all(fd, &len);
	close(fd);
	if (!answer) {
		free(raw);
		return 2;
	}
	free(raw);
	if (strcmp(argv[1], "raw") == 0) {
		fwrite(answer, 1, len, stdout);
		free(answer);
		return 0;
	}
	char *body = strstr(answer, "\r\n\r\n");
	int rc = 2;
	if (body) {
		fwrite(body + 4, 1, len - (size_t)(body + 4 - answer), stdout);
		rc = strncmp(answer, "HTTP/1.0 200 ", 13) == 0 ||
		     strncmp(answer, "HTTP/1.1 200 ", 13) == 0 ? 0 : 1;
	}
	free(answer);
	return rc;
}
