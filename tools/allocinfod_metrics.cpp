/* SPDX-License-Identifier: MIT */
/* The Prometheus endpoint of allocinfod (see allocinfod_metrics.h). */
#include "allocinfod_metrics.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <new>

#include "allocinfod_access.h"
#include "allocinfod_log.h"
#include "allocinfod_report.h"

namespace allocinfod {

namespace {

constexpr size_t MAX_REQUEST = 8192;	/* request line and headers */
constexpr int IO_TIMEOUT_MS = 5000;	/* for the whole request, and for each write */

long long now_ms()
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

bool is_loopback(const struct sockaddr_storage &ss)
{
	if (ss.ss_family == AF_INET) {
		const auto *a = (const struct sockaddr_in *)&ss;
		return (ntohl(a->sin_addr.s_addr) >> 24) == 127;
	}
	if (ss.ss_family == AF_INET6) {
		const auto *a = (const struct sockaddr_in6 *)&ss;
		if (IN6_IS_ADDR_LOOPBACK(&a->sin6_addr))
			return true;
		return IN6_IS_ADDR_V4MAPPED(&a->sin6_addr) && a->sin6_addr.s6_addr[12] == 127;
	}
	return false;
}

/* "127.0.0.1:9100", "[::1]:9100", "localhost:9100" -> a socket address. */
bool parse_address(const std::string &spec, struct sockaddr_storage &ss, socklen_t &len,
		   std::string &why)
{
	size_t colon = spec.rfind(':');
	if (colon == std::string::npos || colon + 1 >= spec.size()) {
		why = "--metrics wants ADDRESS:PORT, not '" + spec + "'";
		return false;
	}
	std::string host = spec.substr(0, colon), port = spec.substr(colon + 1);
	char *end;
	errno = 0;
	long p = strtol(port.c_str(), &end, 10);
	if (*end || errno || p < 0 || p > 65535 || port[0] == '-' || port[0] == '+') {
		why = "--metrics: bad port '" + port + "'";
		return false;
	}
	memset(&ss, 0, sizeof(ss));
	if (host == "localhost")
		host = "127.0.0.1";
	if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
		auto *a = (struct sockaddr_in6 *)&ss;
		std::string h = host.substr(1, host.size() - 2);
		if (inet_pton(AF_INET6, h.c_str(), &a->sin6_addr) != 1) {
			why = "--metrics: bad IPv6 address '" + h + "'";
			return false;
		}
		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)p);
		len = sizeof(*a);
		return true;
	}
	auto *a = (struct sockaddr_in *)&ss;
	if (inet_pton(AF_INET, host.c_str(), &a->sin_addr) != 1) {
		why = "--metrics: bad IPv4 address '" + host + "' (names other than localhost "
		      "are not resolved)";
		return false;
	}
	a->sin_family = AF_INET;
	a->sin_port = htons((uint16_t)p);
	len = sizeof(*a);
	return true;
}

std::string format_address(const struct sockaddr_storage &ss)
{
	char host[INET6_ADDRSTRLEN] = "?";
	unsigned port = 0;
	if (ss.ss_family == AF_INET6) {
		const auto *a = (const struct sockaddr_in6 *)&ss;
		inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof(host));
		port = ntohs(a->sin6_port);
		return "[" + std::string(host) + "]:" + std::to_string(port);
	}
	const auto *a = (const struct sockaddr_in *)&ss;
	inet_ntop(AF_INET, &a->sin_addr, host, sizeof(host));
	port = ntohs(a->sin_port);
	return std::string(host) + ":" + std::to_string(port);
}

/* Sends all of buf within the deadline; false when the client is gone or too slow. */
bool send_all(int fd, const char *buf, size_t len, long long deadline)
{
	while (len) {
		long long left = deadline - now_ms();
		struct pollfd pfd = {fd, POLLOUT, 0};
		if (left <= 0 || poll(&pfd, 1, (int)left) <= 0)
			return false;
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return false;
		}
		buf += n;
		len -= (size_t)n;
	}
	return true;
}

void respond(int fd, int code, const char *reason, const char *type, const std::string &body,
	     bool head)
{
	std::string r = "HTTP/1.0 " + std::to_string(code) + " " + reason + "\r\n";
	r += "Content-Type: ";
	r += type;
	r += "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
	r += "Connection: close\r\n\r\n";
	if (!head)
		r += body;
	send_all(fd, r.data(), r.size(), now_ms() + IO_TIMEOUT_MS);
}

/*
 * Closes after the answer without losing it: unread request bytes at close() would
 * make the kernel reset the connection, and the client could miss the answer. So
 * the write side is shut first and what the client still sends is read and
 * dropped, within bounds.
 */
void linger_close(int fd)
{
	shutdown(fd, SHUT_WR);
	long long deadline = now_ms() + 1000;
	size_t drained = 0;
	char buf[4096];
	while (drained < (64u << 10)) {
		long long left = deadline - now_ms();
		struct pollfd pfd = {fd, POLLIN, 0};
		if (left <= 0 || poll(&pfd, 1, (int)left) <= 0)
			break;
		ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			break;
		drained += (size_t)n;
	}
	close(fd);
}

} /* namespace */

metrics_server::~metrics_server()
{
	stop();
}

bool metrics_server::bind_to(const std::string &spec, bool allow_remote, std::string &why)
{
	struct sockaddr_storage ss;
	socklen_t len;
	if (!parse_address(spec, ss, len, why))
		return false;
	if (!allow_remote && !is_loopback(ss)) {
		why = "--metrics " + spec + ": not a loopback address (add --metrics-remote "
		      "to serve other machines)";
		return false;
	}
	int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		why = std::string("socket: ") + strerror(errno);
		return false;
	}
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) != 0 || listen(fd, 16) != 0) {
		why = "--metrics " + spec + ": " + strerror(errno);
		close(fd);
		return false;
	}
	len = sizeof(ss);
	getsockname(fd, (struct sockaddr *)&ss, &len);
	bound_ = format_address(ss);
	listen_fd_ = fd;
	return true;
}

bool metrics_server::start(reports *src, mode_t mode, std::string &why)
{
	src_ = src;
	mode_ = mode;
	if (pipe2(stop_pipe_, O_CLOEXEC) != 0) {
		why = std::string("pipe: ") + strerror(errno);
		return false;
	}
	int err = pthread_create(&thread_, nullptr, run, this);
	if (err) {
		why = std::string("cannot start the metrics thread: ") + strerror(err);
		return false;
	}
	running_ = true;
	return true;
}

void metrics_server::stop()
{
	if (running_) {
		char c = 0;
		while (write(stop_pipe_[1], &c, 1) < 0 && errno == EINTR) {
		}
		pthread_join(thread_, nullptr);
		running_ = false;
	}
	for (int *fd : {&listen_fd_, &stop_pipe_[0], &stop_pipe_[1]})
		if (*fd >= 0) {
			close(*fd);
			*fd = -1;
		}
}

void *metrics_server::run(void *arg)
{
	auto *self = static_cast<metrics_server *>(arg);
	for (;;) {
		struct pollfd pfd[2] = {{self->listen_fd_, POLLIN, 0}, {self->stop_pipe_[0], POLLIN, 0}};
		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			log_msg(LOG_ERR, "metrics: poll: %s", strerror(errno));
			return nullptr;
		}
		if (pfd[1].revents)
			return nullptr;
		int fd = accept4(self->listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0)
			continue;	/* EAGAIN, ECONNABORTED, EMFILE: try again later */
		try {
			self->serve(fd);
		} catch (const std::bad_alloc &) {
			log_msg(LOG_ERR, "metrics: out of memory");
		}
		linger_close(fd);
	}
}

void metrics_server::serve(int fd)
{
	/* Read the request line and headers, bounded in size and time. */
	char req[MAX_REQUEST + 1];
	size_t got = 0;
	long long deadline = now_ms() + IO_TIMEOUT_MS;
	for (;;) {
		req[got] = '\0';
		if (strstr(req, "\r\n\r\n") || strstr(req, "\n\n"))
			break;
		if (got == MAX_REQUEST) {
			respond(fd, 431, "Request Header Fields Too Large", "text/plain",
				"request too large\n", false);
			return;
		}
		long long left = deadline - now_ms();
		struct pollfd pfd = {fd, POLLIN, 0};
		if (left <= 0 || poll(&pfd, 1, (int)left) <= 0)
			return;	/* too slow: drop it */
		ssize_t n = recv(fd, req + got, MAX_REQUEST - got, MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			return;
		if (memchr(req + got, '\0', (size_t)n)) {
			respond(fd, 400, "Bad Request", "text/plain", "bad request\n", false);
			return;
		}
		got += (size_t)n;
	}

	char method[16], target[1024], version[16];
	if (sscanf(req, "%15s %1023s %15s", method, target, version) != 3 ||
	    strncmp(version, "HTTP/1.", 7) != 0) {
		respond(fd, 400, "Bad Request", "text/plain", "bad request\n", false);
		return;
	}
	bool head = strcmp(method, "HEAD") == 0;
	if (!head && strcmp(method, "GET") != 0) {
		respond(fd, 405, "Method Not Allowed", "text/plain", "only GET\n", false);
		return;
	}
	char *query = strchr(target, '?');
	if (query)
		*query = '\0';
	if (strcmp(target, "/metrics") == 0) {
		viewer v = peer_of(fd);
		if (!v.known && !(mode_ & S_IROTH)) {
			respond(fd, 403, "Forbidden", "text/plain",
				"the client is not of this machine, and the mode gives others nothing\n",
				head);
			return;
		}
		std::string body;
		src_->metrics(body, v, mode_);
		respond(fd, 200, "OK", "text/plain; version=0.0.4; charset=utf-8", body, head);
	} else if (strcmp(target, "/") == 0) {
		respond(fd, 200, "OK", "text/plain; charset=utf-8",
			"allocinfod: the metrics are at /metrics\n", head);
	} else {
		respond(fd, 404, "Not Found", "text/plain", "not found\n", head);
	}
}

} /* namespace allocinfod */
