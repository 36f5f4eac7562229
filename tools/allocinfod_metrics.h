/* SPDX-License-Identifier: MIT */
/*
 * allocinfod --metrics: a minimal HTTP/1.0 server for Prometheus. GET /metrics
 * answers the text exposition format over the live processes the client may see
 * (one series per process and call site): all of them for a client that could
 * read the combined file, else those whose own file it could read
 * (allocinfod_access.h); a client that cannot be identified and has no rights as
 * "others" gets 403. One connection at a time, requests bounded in size and
 * time: it is meant for a scraper, not for the open internet, and binds only to
 * loopback unless told otherwise.
 */
#ifndef ALLOCINFOD_METRICS_H
#define ALLOCINFOD_METRICS_H

#include <pthread.h>
#include <sys/types.h>

#include <string>

namespace allocinfod {

class reports;

class metrics_server {
public:
	metrics_server() = default;
	~metrics_server();
	metrics_server(const metrics_server &) = delete;
	metrics_server &operator=(const metrics_server &) = delete;

	/* Binds to "ADDR:PORT" (IPv4, "[IPv6]" or "localhost"; PORT 0 picks one).
	 * A non-loopback address is refused unless allow_remote. */
	bool bind_to(const std::string &spec, bool allow_remote, std::string &why);
	/* The address actually bound, "127.0.0.1:9123". */
	const std::string &address() const { return bound_; }
	/* Serves in a thread of its own until stop(). mode: that of the served files,
	 * whose rule the endpoint applies (allocinfod_access.h). */
	bool start(reports *src, mode_t mode, std::string &why);
	void stop();

private:
	static void *run(void *self);
	void serve(int fd);

	int listen_fd_ = -1;
	int stop_pipe_[2] = {-1, -1};
	bool running_ = false;
	pthread_t thread_{};
	reports *src_ = nullptr;
	mode_t mode_ = 0400;
	std::string bound_;
};

} /* namespace allocinfod */

#endif
