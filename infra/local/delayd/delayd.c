/*
 * delayd: per-(source, destination) WAN delay for the emulated cloud.
 *
 * Why it exists: this machine's kernel has no sch_netem, so no qdisc can delay
 * packets. Instead the hub namespace sends bridged IPv4 packets to NFQUEUE
 * (iptables -A FORWARD ... -j NFQUEUE --queue-balance F:L) and this program
 * holds each packet's verdict until its one-way delay has passed.
 *
 * Design, in the order a packet meets it:
 *  - One thread per queue, each with its own netlink socket, so the queues
 *    never share a lock. The kernel hashes a flow to one queue, and within a
 *    queue verdicts are issued in release order, so per-flow order is kept.
 *  - Only the first COPY_RANGE bytes of a packet are copied to user space
 *    (enough for the IPv4 addresses); the verdict is NF_ACCEPT without a
 *    payload, so the kernel keeps and re-injects its own copy. NFQA_CFG_F_GSO
 *    stops the kernel from segmenting GSO packets for us.
 *  - The table (FILE) maps (src, dst) to delay, jitter and loss. A packet of
 *    an unknown pair, or a non-IPv4 packet, is accepted at once.
 *  - A packet is dropped with probability loss_ppm / 1e6. Otherwise its
 *    release time is max(arrival + delay + U(-jitter, +jitter),
 *    last release of its pair in this queue): jitter never reorders a flow.
 *  - Held packets sit in a min-heap keyed by (release time, arrival sequence);
 *    the sequence breaks ties so equal release times keep arrival order.
 *  - The thread sleeps in ppoll() until the earlier of "a packet arrives" and
 *    "the next release is due" (CLOCK_MONOTONIC, timer slack 1 ns, and
 *    SCHED_FIFO when permitted), then sends every due verdict in one batch.
 *  - The main thread only handles signals: SIGHUP reloads FILE (a bad file is
 *    reported and the old table kept), SIGUSR1 prints counters, SIGTERM and
 *    SIGINT make every thread accept all it holds and exit 0.
 *
 * What it holds is bounded twice: in packets per queue (--max-held) and in
 * bytes over all queues (--max-held-bytes), since with GSO one packet can be
 * 64 kB and the kernel keeps every held packet whole. A packet over either
 * bound is dropped and counted (overflow, byte_overflow).
 *
 * A verdict that cannot be sent would strand its packet in the kernel's queue
 * (nothing else ever releases it), so a failed send is retried a bounded
 * number of times with a short backoff; then the batch is given up, counted
 * (verdict_failed) and logged.
 *
 * Packets lost to a full queue or a full socket buffer (ENOBUFS) are counted
 * and printed at exit; the queue length and buffer are set large to make that
 * rare.
 *
 * `delayd --self-test` runs the unit tests of the pure parts (table parsing,
 * release times, heap order); `delayd --check --table FILE` parses FILE and
 * prints it normalised, so the parser can be tested from outside.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <libnetfilter_queue/libnetfilter_queue.h>

#define COPY_RANGE 64                 /* IPv4 header plus ports, with room */
#define RCVBUF_BYTES (64 << 20)       /* netlink receive buffer per queue */
#define MAX_DELAY_US 10000000u        /* 10 s: anything longer is a typo */
#define DRAIN_BATCH 64                /* messages read before releasing again */
#define VERDICT_BATCH_BYTES (1 << 16) /* verdicts sent per sendto() */
#define NL_BUF_BYTES 8192             /* one netlink message: config or verdict */
#define RECV_BUF_BYTES (1 << 16)
#define VERDICT_RETRIES 4             /* re-sends of a failed verdict batch */
#define RETRY_BACKOFF_US 50           /* x4 per retry: 50, 200, 800, 3200 µs */

/* ------------------------------------------------------------------ table */

struct pair {
    uint64_t key; /* src << 32 | dst, both in network byte order */
    uint32_t delay_us, jitter_us, loss_ppm;
    bool used;
    int64_t last_release_ns; /* per-thread state; 0 in the shared table */
};

struct table {
    size_t n, mask; /* mask + 1 slots, a power of two at least 2n */
    struct pair *slots;
};

static uint64_t pair_key(uint32_t src_be, uint32_t dst_be)
{
    return (uint64_t)src_be << 32 | dst_be;
}

static size_t slot_of(const struct table *t, uint64_t key)
{
    return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 17) & t->mask;
}

static struct pair *table_find(const struct table *t, uint64_t key)
{
    if (!t->slots)
        return NULL;
    for (size_t i = slot_of(t, key);; i = (i + 1) & t->mask) {
        if (!t->slots[i].used)
            return NULL;
        if (t->slots[i].key == key)
            return &t->slots[i];
    }
}

static int table_init(struct table *t, size_t capacity)
{
    size_t size = 16;
    while (size < 2 * capacity + 2)
        size <<= 1;
    t->slots = calloc(size, sizeof *t->slots);
    t->mask = size - 1;
    t->n = 0;
    return t->slots ? 0 : -1;
}

static void table_free(struct table *t)
{
    free(t->slots);
    t->slots = NULL;
    t->n = 0;
}

/* Insert; the caller has checked the key is absent and capacity suffices. */
static struct pair *table_insert(struct table *t, const struct pair *p)
{
    size_t i = slot_of(t, p->key);
    while (t->slots[i].used)
        i = (i + 1) & t->mask;
    t->slots[i] = *p;
    t->slots[i].used = true;
    t->n++;
    return &t->slots[i];
}

static int parse_u32(const char *s, uint32_t max, uint32_t *out)
{
    char *end;
    if (*s < '0' || *s > '9')
        return -1;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v > max)
        return -1;
    *out = (uint32_t)v;
    return 0;
}

/*
 * Parse a table from `f` (named `name` in messages). On error return -1 with
 * a one-line message in err naming the file, line and what to fix.
 */
static int table_parse(FILE *f, const char *name, struct table *out, char *err, size_t errlen)
{
    size_t cap = 0, n = 0;
    struct pair *rows = NULL;
    char *line = NULL;
    size_t linecap = 0;
    unsigned lineno = 0;
    int rc = -1;

    while (getline(&line, &linecap, f) >= 0) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char *tok[6], *save = NULL;
        int nt = 0;
        for (char *s = strtok_r(line, " \t\r\n", &save); s && nt < 6;
             s = strtok_r(NULL, " \t\r\n", &save))
            tok[nt++] = s;
        if (nt == 0)
            continue;
        if (nt != 5) {
            snprintf(err, errlen,
                     "%s:%u: expected 5 fields 'src_ip dst_ip delay_us jitter_us loss_ppm', got %d",
                     name, lineno, nt);
            goto out;
        }
        struct in_addr src, dst;
        if (inet_pton(AF_INET, tok[0], &src) != 1 || inet_pton(AF_INET, tok[1], &dst) != 1) {
            snprintf(err, errlen, "%s:%u: '%s' or '%s' is not an IPv4 address", name, lineno,
                     tok[0], tok[1]);
            goto out;
        }
        struct pair p = {.key = pair_key(src.s_addr, dst.s_addr)};
        if (parse_u32(tok[2], MAX_DELAY_US, &p.delay_us) ||
            parse_u32(tok[3], MAX_DELAY_US, &p.jitter_us)) {
            snprintf(err, errlen, "%s:%u: delay_us and jitter_us must be integers 0..%u", name,
                     lineno, MAX_DELAY_US);
            goto out;
        }
        if (parse_u32(tok[4], 1000000, &p.loss_ppm)) {
            snprintf(err, errlen, "%s:%u: loss_ppm must be an integer 0..1000000", name, lineno);
            goto out;
        }
        for (size_t i = 0; i < n; i++)
            if (rows[i].key == p.key) {
                snprintf(err, errlen, "%s:%u: pair %s %s appears twice: keep one line", name,
                         lineno, tok[0], tok[1]);
                goto out;
            }
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            struct pair *grown = realloc(rows, cap * sizeof *rows);
            if (!grown) {
                snprintf(err, errlen, "%s: out of memory", name);
                goto out;
            }
            rows = grown;
        }
        rows[n++] = p;
    }
    if (ferror(f)) {
        snprintf(err, errlen, "%s: read error: %s", name, strerror(errno));
        goto out;
    }
    if (table_init(out, n)) {
        snprintf(err, errlen, "%s: out of memory", name);
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        table_insert(out, &rows[i]);
    rc = 0;
out:
    free(rows);
    free(line);
    return rc;
}

static int table_load(const char *path, struct table *out, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    int rc = table_parse(f, path, out, err, errlen);
    fclose(f);
    return rc;
}

/* A per-thread copy of `shared`, keeping the last release times of `old`. */
static int table_copy(const struct table *shared, const struct table *old, struct table *out)
{
    if (table_init(out, shared->n))
        return -1;
    for (size_t i = 0; i <= shared->mask; i++) {
        if (!shared->slots[i].used)
            continue;
        struct pair *p = table_insert(out, &shared->slots[i]);
        const struct pair *was = table_find(old, p->key);
        p->last_release_ns = was ? was->last_release_ns : 0;
    }
    return 0;
}

/* --------------------------------------------------------- release logic */

static uint64_t rng_next(uint64_t *s) /* xorshift64*: fast, good enough here */
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1Dull;
}

static bool lose_packet(uint64_t *rng, uint32_t loss_ppm)
{
    return loss_ppm && rng_next(rng) % 1000000u < loss_ppm;
}

/* Uniform in [-jitter_us, +jitter_us] µs, in ns. */
static int64_t jitter_sample_ns(uint64_t *rng, uint32_t jitter_us)
{
    if (!jitter_us)
        return 0;
    uint64_t span_ns = 2ull * jitter_us * 1000 + 1;
    return (int64_t)(rng_next(rng) % span_ns) - (int64_t)jitter_us * 1000;
}

/*
 * When a packet arriving at arrival_ns is released: its delay plus a jitter
 * sample, never before the previous packet of the same pair (so never
 * reordered), never before it arrived. Updates p->last_release_ns.
 */
static int64_t release_time_ns(struct pair *p, int64_t arrival_ns, int64_t jitter_ns)
{
    int64_t delay_ns = (int64_t)p->delay_us * 1000 + jitter_ns;
    int64_t t = arrival_ns + (delay_ns > 0 ? delay_ns : 0);
    if (t < p->last_release_ns)
        t = p->last_release_ns;
    p->last_release_ns = t;
    return t;
}

/* ------------------------------------------------------------------ heap */

struct held {
    int64_t release_ns;
    uint64_t seq;
    uint32_t id;    /* the kernel's packet id */
    uint32_t bytes; /* the whole packet's length (a GSO packet: up to 64 kB) */
};

struct heap {
    size_t n, cap;
    struct held *v;
};

static bool held_before(const struct held *a, const struct held *b)
{
    return a->release_ns < b->release_ns || (a->release_ns == b->release_ns && a->seq < b->seq);
}

static bool heap_push(struct heap *h, struct held x)
{
    if (h->n == h->cap)
        return false;
    size_t i = h->n++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!held_before(&x, &h->v[parent]))
            break;
        h->v[i] = h->v[parent];
        i = parent;
    }
    h->v[i] = x;
    return true;
}

static struct held heap_pop(struct heap *h)
{
    struct held top = h->v[0], last = h->v[--h->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && held_before(&h->v[c + 1], &h->v[c]))
            c++;
        if (!held_before(&h->v[c], &last))
            break;
        h->v[i] = h->v[c];
        i = c;
    }
    if (h->n)
        h->v[i] = last;
    return top;
}

/* ----------------------------------------------------------- byte bound */

/* Bytes held over all queues: each queue's thread takes before it holds a
 * packet and gives back when it releases it. */
struct budget {
    atomic_ullong held, peak;
    unsigned long long limit;
};

/* Take `bytes`; false, and nothing taken, if that would pass the limit. Two
 * threads adding at once may both be refused, never both let through. */
static bool budget_take(struct budget *b, uint32_t bytes)
{
    unsigned long long now = atomic_fetch_add(&b->held, bytes) + bytes;
    if (now > b->limit) {
        atomic_fetch_sub(&b->held, bytes);
        return false;
    }
    unsigned long long peak = atomic_load(&b->peak);
    while (now > peak && !atomic_compare_exchange_weak(&b->peak, &peak, now))
        ;
    return true;
}

static void budget_give(struct budget *b, uint32_t bytes)
{
    atomic_fetch_sub(&b->held, bytes);
}

/* ------------------------------------------------------- verdict sending */

typedef ssize_t (*send_fn)(void *ctx, const void *buf, size_t len);

/*
 * Send one batch, retrying a failed send up to VERDICT_RETRIES times with a
 * backoff of backoff_us x 4^k. Returns the retries it took, or -1 (errno from
 * the last send) when every try failed.
 */
static int send_retrying(send_fn send, void *ctx, const void *buf, size_t len,
                         unsigned backoff_us)
{
    for (int attempt = 0;; attempt++) {
        if (send(ctx, buf, len) >= 0)
            return attempt;
        if (attempt == VERDICT_RETRIES)
            return -1;
        if (backoff_us) {
            struct timespec ts = {0, (long)backoff_us * 1000L << (2 * attempt)};
            int saved = errno;
            nanosleep(&ts, NULL);
            errno = saved;
        }
    }
}

/* -------------------------------------------------------- shared state */

static const char *table_path;
static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;
static struct table shared_table; /* guarded by shared_lock */
static atomic_uint table_gen;
static atomic_bool stopping;
static struct budget held_bytes; /* limit set by --max-held-bytes */
static atomic_uint fail_sends;   /* --fail-sends: a test hook, 0 in real use */

struct counters {
    atomic_ullong delayed, passed, lost, overflow, enobufs, errors;
    atomic_ullong byte_overflow, verdict_retries, verdict_failed;
    atomic_ullong packet_bytes_peak; /* largest packet seen: > 1514 means GSO */
};

struct worker {
    pthread_t thread;
    uint16_t queue;
    struct mnl_socket *nl;
    unsigned portid;
    int wake_fd; /* eventfd: reload or stop */
    struct table table;
    unsigned gen;
    struct heap heap;
    uint64_t rng, seq;
    int64_t now_ns; /* arrival time of the message being parsed */
    char *vbuf;     /* verdict batch */
    char *rbuf;     /* received messages */
    struct mnl_nlmsg_batch *batch;
    unsigned batch_msgs; /* verdicts in the batch, counting one carried over */
    struct counters c;
};

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static ssize_t send_to_kernel(void *ctx, const void *buf, size_t len)
{
    struct worker *w = ctx;
    unsigned left = atomic_load(&fail_sends);
    while (left && !atomic_compare_exchange_weak(&fail_sends, &left, left - 1))
        ;
    if (left) {
        errno = ENOBUFS;
        return -1;
    }
    return mnl_socket_sendto(w->nl, buf, len);
}

/* Send the first `len` bytes of the batch, `msgs` verdicts. */
static void send_batch(struct worker *w, size_t len, unsigned msgs)
{
    if (!len)
        return;
    int retries = send_retrying(send_to_kernel, w, mnl_nlmsg_batch_head(w->batch), len,
                                RETRY_BACKOFF_US);
    if (retries >= 0) {
        atomic_fetch_add(&w->c.verdict_retries, (unsigned)retries);
        return;
    }
    int e = errno;
    atomic_fetch_add(&w->c.verdict_retries, VERDICT_RETRIES);
    atomic_fetch_add(&w->c.verdict_failed, msgs);
    fprintf(stderr,
            "delayd: warning: queue %u: %u verdicts not sent after %d tries (%s): "
            "their packets stay in the kernel queue\n",
            w->queue, msgs, VERDICT_RETRIES + 1, strerror(e));
}

static void flush_verdicts(struct worker *w)
{
    send_batch(w, mnl_nlmsg_batch_size(w->batch), w->batch_msgs);
    w->batch_msgs = 0;
    mnl_nlmsg_batch_reset(w->batch);
}

static void verdict(struct worker *w, uint32_t id, int verdict)
{
    struct nlmsghdr *nlh =
        nfq_nlmsg_put(mnl_nlmsg_batch_current(w->batch), NFQNL_MSG_VERDICT, w->queue);
    nfq_nlmsg_verdict_put(nlh, (int)id, verdict);
    w->batch_msgs++;
    /* When the batch is full, send all but this message, which libmnl carries over. */
    if (!mnl_nlmsg_batch_next(w->batch)) {
        send_batch(w, mnl_nlmsg_batch_size(w->batch), w->batch_msgs - 1);
        mnl_nlmsg_batch_reset(w->batch);
        w->batch_msgs = 1;
    }
}

static int on_packet(const struct nlmsghdr *nlh, void *data)
{
    struct worker *w = data;
    struct nlattr *attr[NFQA_MAX + 1] = {0};
    if (nfq_nlmsg_parse(nlh, attr) < 0 || !attr[NFQA_PACKET_HDR]) {
        atomic_fetch_add(&w->c.errors, 1);
        return MNL_CB_OK;
    }
    struct nfqnl_msg_packet_hdr *ph = mnl_attr_get_payload(attr[NFQA_PACKET_HDR]);
    uint32_t id = ntohl(ph->packet_id);
    const uint8_t *pkt = attr[NFQA_PAYLOAD] ? mnl_attr_get_payload(attr[NFQA_PAYLOAD]) : NULL;
    uint16_t len = attr[NFQA_PAYLOAD] ? mnl_attr_get_payload_len(attr[NFQA_PAYLOAD]) : 0;
    /* Only COPY_RANGE bytes were copied; NFQA_CAP_LEN is the whole packet's length. */
    uint32_t bytes = attr[NFQA_CAP_LEN] ? ntohl(mnl_attr_get_u32(attr[NFQA_CAP_LEN])) : len;
    if (bytes > atomic_load(&w->c.packet_bytes_peak))
        atomic_store(&w->c.packet_bytes_peak, bytes);

    struct pair *p = NULL;
    if (ntohs(ph->hw_protocol) == 0x0800 && len >= 20 && (pkt[0] >> 4) == 4) {
        uint32_t src, dst;
        memcpy(&src, pkt + 12, 4);
        memcpy(&dst, pkt + 16, 4);
        p = table_find(&w->table, pair_key(src, dst));
    }
    if (!p) {
        verdict(w, id, NF_ACCEPT);
        atomic_fetch_add(&w->c.passed, 1);
        return MNL_CB_OK;
    }
    if (lose_packet(&w->rng, p->loss_ppm)) {
        verdict(w, id, NF_DROP);
        atomic_fetch_add(&w->c.lost, 1);
        return MNL_CB_OK;
    }
    if (w->heap.n == w->heap.cap) {
        verdict(w, id, NF_DROP); /* more held than --max-held: a full queue drops */
        atomic_fetch_add(&w->c.overflow, 1);
        return MNL_CB_OK;
    }
    if (!budget_take(&held_bytes, bytes)) {
        verdict(w, id, NF_DROP); /* more bytes held than --max-held-bytes */
        atomic_fetch_add(&w->c.byte_overflow, 1);
        return MNL_CB_OK;
    }
    int64_t t = release_time_ns(p, w->now_ns, jitter_sample_ns(&w->rng, p->jitter_us));
    heap_push(&w->heap, (struct held){t, w->seq++, id, bytes}); /* room checked above */
    atomic_fetch_add(&w->c.delayed, 1);
    return MNL_CB_OK;
}

/* Read what is waiting on the socket (at most DRAIN_BATCH messages). */
static void drain(struct worker *w, int limit)
{
    char *buf = w->rbuf;
    for (int i = 0; i < limit; i++) {
        ssize_t n = recv(mnl_socket_get_fd(w->nl), buf, RECV_BUF_BYTES, MSG_DONTWAIT);
        if (n < 0) {
            if (errno == ENOBUFS) {
                atomic_fetch_add(&w->c.enobufs, 1); /* the kernel dropped packets */
                continue;
            }
            return; /* EAGAIN: empty */
        }
        w->now_ns = now_ns();
        if (mnl_cb_run(buf, (size_t)n, 0, w->portid, on_packet, w) < 0)
            atomic_fetch_add(&w->c.errors, 1); /* e.g. an error reply to a verdict */
    }
}

static void release_due(struct worker *w, int64_t now)
{
    while (w->heap.n && w->heap.v[0].release_ns <= now) {
        struct held h = heap_pop(&w->heap);
        budget_give(&held_bytes, h.bytes);
        verdict(w, h.id, NF_ACCEPT);
    }
}

static void reload_private_table(struct worker *w)
{
    struct table fresh;
    pthread_mutex_lock(&shared_lock);
    int rc = table_copy(&shared_table, &w->table, &fresh);
    w->gen = atomic_load(&table_gen);
    pthread_mutex_unlock(&shared_lock);
    if (rc) {
        fprintf(stderr, "delayd: warning: queue %u: out of memory, kept the old table\n",
                w->queue);
        return;
    }
    table_free(&w->table);
    w->table = fresh;
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    int nlfd = mnl_socket_get_fd(w->nl);
    prctl(PR_SET_TIMERSLACK, 1UL); /* wake within ns of the due time, not 50 µs */

    while (!atomic_load(&stopping)) {
        if (w->gen != atomic_load(&table_gen))
            reload_private_table(w);
        struct timespec ts, *timeout = NULL;
        if (w->heap.n) {
            int64_t wait = w->heap.v[0].release_ns - now_ns();
            if (wait < 0)
                wait = 0;
            ts.tv_sec = wait / 1000000000;
            ts.tv_nsec = wait % 1000000000;
            timeout = &ts;
        }
        struct pollfd fds[2] = {{.fd = nlfd, .events = POLLIN}, {.fd = w->wake_fd, .events = POLLIN}};
        int r = ppoll(fds, 2, timeout, NULL);
        if (r < 0 && errno != EINTR)
            break;
        if (r > 0 && fds[1].revents) {
            uint64_t v;
            if (read(w->wake_fd, &v, sizeof v) < 0)
                atomic_fetch_add(&w->c.errors, 1);
        }
        if (r > 0 && fds[0].revents)
            drain(w, DRAIN_BATCH);
        release_due(w, now_ns());
        flush_verdicts(w);
    }
    /* Stopping: let every held or waiting packet go before the socket closes
     * (closing the queue would drop them). */
    drain(w, INT_MAX);
    release_due(w, INT64_MAX);
    flush_verdicts(w);
    return NULL;
}

/* ------------------------------------------------------------ queue setup */

static int send_cfg(struct worker *w, uint8_t cmd, bool params)
{
    char buf[NL_BUF_BYTES];
    struct nlmsghdr *nlh = nfq_nlmsg_put(buf, NFQNL_MSG_CONFIG, w->queue);
    if (cmd)
        nfq_nlmsg_cfg_put_cmd(nlh, AF_INET, cmd);
    if (params) {
        nfq_nlmsg_cfg_put_params(nlh, NFQNL_COPY_PACKET, COPY_RANGE);
        mnl_attr_put_u32(nlh, NFQA_CFG_FLAGS, htonl(NFQA_CFG_F_GSO));
        mnl_attr_put_u32(nlh, NFQA_CFG_MASK, htonl(NFQA_CFG_F_GSO));
    }
    nlh->nlmsg_flags |= NLM_F_ACK;
    if (mnl_socket_sendto(w->nl, nlh, nlh->nlmsg_len) < 0)
        return -1;
    ssize_t n = mnl_socket_recvfrom(w->nl, buf, sizeof buf);
    if (n < 0)
        return -1;
    return mnl_cb_run(buf, (size_t)n, 0, w->portid, NULL, NULL) < 0 ? -1 : 0;
}

static int send_maxlen(struct worker *w, uint32_t maxlen)
{
    char buf[NL_BUF_BYTES];
    struct nlmsghdr *nlh = nfq_nlmsg_put(buf, NFQNL_MSG_CONFIG, w->queue);
    nfq_nlmsg_cfg_put_qmaxlen(nlh, maxlen);
    nlh->nlmsg_flags |= NLM_F_ACK;
    if (mnl_socket_sendto(w->nl, nlh, nlh->nlmsg_len) < 0)
        return -1;
    ssize_t n = mnl_socket_recvfrom(w->nl, buf, sizeof buf);
    if (n < 0)
        return -1;
    return mnl_cb_run(buf, (size_t)n, 0, w->portid, NULL, NULL) < 0 ? -1 : 0;
}

static int open_queue(struct worker *w, uint32_t max_held)
{
    w->nl = mnl_socket_open(NETLINK_NETFILTER);
    if (!w->nl || mnl_socket_bind(w->nl, 0, MNL_SOCKET_AUTOPID) < 0) {
        fprintf(stderr, "delayd: error: netlink socket: %s (run as root)\n", strerror(errno));
        return -1;
    }
    w->portid = mnl_socket_get_portid(w->nl);
    int fd = mnl_socket_get_fd(w->nl), size = RCVBUF_BYTES, one = 1;
    /* FORCE ignores rmem_max (we are root); fall back to the capped call. */
    if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size) < 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
    setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof one);
    if (send_cfg(w, NFQNL_CFG_CMD_BIND, false) < 0) {
        fprintf(stderr, "delayd: error: cannot bind queue %u: %s (is another delayd running?)\n",
                w->queue, strerror(errno));
        return -1;
    }
    if (send_cfg(w, 0, true) < 0 || send_maxlen(w, max_held) < 0) {
        fprintf(stderr, "delayd: error: cannot configure queue %u: %s\n", w->queue,
                strerror(errno));
        return -1;
    }
    w->heap.cap = max_held;
    w->heap.v = malloc(sizeof *w->heap.v * max_held);
    w->vbuf = malloc(VERDICT_BATCH_BYTES);
    w->rbuf = malloc(RECV_BUF_BYTES);
    w->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (!w->heap.v || !w->vbuf || !w->rbuf || w->wake_fd < 0) {
        fprintf(stderr, "delayd: error: out of memory\n");
        return -1;
    }
    /* The batch limit leaves one message of slack, as libmnl expects. */
    w->batch = mnl_nlmsg_batch_start(w->vbuf, VERDICT_BATCH_BYTES - NL_BUF_BYTES);
    w->rng = 0x9E3779B97F4A7C15ull ^ ((uint64_t)now_ns() << 8) ^ w->queue;
    return 0;
}

/* ------------------------------------------------------------ self-test */

static int failures;
#define CHECK(cond)                                                                       \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            fprintf(stderr, "self-test: FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);    \
            failures++;                                                                   \
        }                                                                                 \
    } while (0)

static int parse_string(const char *text, struct table *t, char *err, size_t errlen)
{
    FILE *f = fmemopen((void *)text, strlen(text), "r");
    int rc = table_parse(f, "t", t, err, errlen);
    fclose(f);
    return rc;
}

struct fake_sender {
    int fail, calls; /* the first `fail` calls fail */
};

static ssize_t fake_send(void *ctx, const void *buf, size_t len)
{
    struct fake_sender *f = ctx;
    (void)buf;
    if (f->calls++ < f->fail) {
        errno = ENOBUFS;
        return -1;
    }
    return (ssize_t)len;
}

static int self_test(void)
{
    char err[256];
    struct table t = {0};
    struct in_addr a, b;
    inet_pton(AF_INET, "198.19.250.1", &a);
    inet_pton(AF_INET, "198.19.250.2", &b);

    /* Parsing: comments, blank lines, both directions, lookups. */
    CHECK(parse_string("# header\n\n198.19.250.1 198.19.250.2 20000 500 100 # x\n"
                       "198.19.250.2\t198.19.250.1  19000 0 0\n",
                       &t, err, sizeof err) == 0);
    CHECK(t.n == 2);
    struct pair *p = table_find(&t, pair_key(a.s_addr, b.s_addr));
    CHECK(p && p->delay_us == 20000 && p->jitter_us == 500 && p->loss_ppm == 100);
    p = table_find(&t, pair_key(b.s_addr, a.s_addr));
    CHECK(p && p->delay_us == 19000 && p->jitter_us == 0);
    CHECK(table_find(&t, pair_key(a.s_addr, a.s_addr)) == NULL);
    table_free(&t);

    /* Parsing: every kind of bad line is an error naming its line. */
    const char *bad[] = {
        "198.19.250.1 198.19.250.2 20000 0\n",         /* too few fields */
        "198.19.250.1 198.19.250.2 1 2 3 4\n",         /* too many */
        "198.19.250.1 nohost 20000 0 0\n",             /* bad address */
        "198.19.250.1 198.19.250.2 -5 0 0\n",          /* negative */
        "198.19.250.1 198.19.250.2 2e4 0 0\n",         /* not an integer */
        "198.19.250.1 198.19.250.2 20000001 0 0\n",    /* over 10 s */
        "198.19.250.1 198.19.250.2 1 0 1000001\n",     /* loss over 100% */
        "198.19.250.1 198.19.250.2 1 0 0\n198.19.250.1 198.19.250.2 2 0 0\n", /* twice */
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        err[0] = '\0';
        CHECK(parse_string(bad[i], &t, err, sizeof err) == -1);
        CHECK(strncmp(err, "t:", 2) == 0);
    }
    CHECK(parse_string("", &t, err, sizeof err) == 0 && t.n == 0);
    CHECK(table_find(&t, 1) == NULL);
    table_free(&t);

    /* Release times, hand-computed: 20 ms delay, no jitter. */
    struct pair q = {.delay_us = 20000};
    CHECK(release_time_ns(&q, 1000, 0) == 20001000);
    CHECK(release_time_ns(&q, 2000, 0) == 20002000);
    /* Negative jitter would release before the previous packet: held back. */
    CHECK(release_time_ns(&q, 3000, -500000) == 20002000);
    /* Positive jitter moves it later, and the next one cannot overtake. */
    CHECK(release_time_ns(&q, 4000, 700000) == 20704000);
    CHECK(release_time_ns(&q, 5000, -700000) == 20704000);
    /* A jitter larger than the delay never releases before arrival. */
    struct pair r = {.delay_us = 100};
    CHECK(release_time_ns(&r, 50000, -900000) == 50000);

    /* Jitter samples stay within bounds and cover both signs. */
    uint64_t rng = 12345;
    bool neg = false, pos = false;
    for (int i = 0; i < 100000; i++) {
        int64_t j = jitter_sample_ns(&rng, 300);
        CHECK(j >= -300000 && j <= 300000);
        neg |= j < -250000;
        pos |= j > 250000;
    }
    CHECK(neg && pos);
    CHECK(jitter_sample_ns(&rng, 0) == 0);

    /* Loss: 1% of a million draws, within 5 standard deviations (~500). */
    int lost = 0;
    for (int i = 0; i < 1000000; i++)
        lost += lose_packet(&rng, 10000);
    CHECK(lost > 9500 && lost < 10500);
    CHECK(!lose_packet(&rng, 0));
    CHECK(lose_packet(&rng, 1000000));

    /* Heap: pops in release order, ties in arrival order. */
    struct held store[8];
    struct heap h = {.cap = 8, .v = store};
    int64_t rel[] = {30, 10, 20, 10, 30, 10};
    for (uint64_t i = 0; i < 6; i++)
        CHECK(heap_push(&h, (struct held){rel[i], i, (uint32_t)i, 0}));
    uint32_t want[] = {1, 3, 5, 2, 0, 4};
    for (int i = 0; i < 6; i++)
        CHECK(heap_pop(&h).id == want[i]);
    for (uint64_t i = 0; i < 8; i++)
        CHECK(heap_push(&h, (struct held){0, i, 0, 0}));
    CHECK(!heap_push(&h, (struct held){0, 9, 0, 0})); /* full */

    /* A jittered flow through table + heap leaves in arrival order. */
    struct held big[4096];
    struct heap hb = {.cap = 4096, .v = big};
    struct pair f = {.delay_us = 1000, .jitter_us = 900};
    for (uint32_t i = 0; i < 4096; i++)
        heap_push(&hb, (struct held){release_time_ns(&f, i * 10000, jitter_sample_ns(&rng, 900)),
                                     i, i, 0});
    for (uint32_t i = 0; i < 4096; i++)
        CHECK(heap_pop(&hb).id == i);

    /* A reload keeps the last release time of pairs that stay. */
    struct table old = {0}, fresh = {0}, copy = {0};
    CHECK(parse_string("198.19.250.1 198.19.250.2 1 0 0\n", &old, err, sizeof err) == 0);
    table_find(&old, pair_key(a.s_addr, b.s_addr))->last_release_ns = 777;
    CHECK(parse_string("198.19.250.1 198.19.250.2 5 0 0\n198.19.250.2 198.19.250.1 5 0 0\n",
                       &fresh, err, sizeof err) == 0);
    CHECK(table_copy(&fresh, &old, &copy) == 0 && copy.n == 2);
    CHECK(table_find(&copy, pair_key(a.s_addr, b.s_addr))->last_release_ns == 777);
    CHECK(table_find(&copy, pair_key(a.s_addr, b.s_addr))->delay_us == 5);
    CHECK(table_find(&copy, pair_key(b.s_addr, a.s_addr))->last_release_ns == 0);
    table_free(&old);
    table_free(&fresh);
    table_free(&copy);

    /* Byte bound: 64 kB GSO packets against 200 kB; refused ones take nothing. */
    struct budget bb = {.limit = 200000};
    CHECK(budget_take(&bb, 65536) && budget_take(&bb, 65536) && budget_take(&bb, 65536));
    CHECK(!budget_take(&bb, 65536)); /* 262144 > 200000 */
    CHECK(atomic_load(&bb.held) == 196608 && atomic_load(&bb.peak) == 196608);
    CHECK(budget_take(&bb, 3392)); /* exactly the limit fits */
    CHECK(!budget_take(&bb, 1));
    budget_give(&bb, 65536);
    CHECK(budget_take(&bb, 1514) && atomic_load(&bb.held) == 200000 - 65536 + 1514);
    CHECK(atomic_load(&bb.peak) == 200000);

    /* Verdict sends: failures are retried, at most VERDICT_RETRIES times. */
    struct fake_sender fs = {.fail = 2};
    CHECK(send_retrying(fake_send, &fs, "x", 1, 0) == 2 && fs.calls == 3);
    fs = (struct fake_sender){.fail = VERDICT_RETRIES};
    CHECK(send_retrying(fake_send, &fs, "x", 1, 0) == VERDICT_RETRIES);
    fs = (struct fake_sender){.fail = 1000};
    errno = 0;
    CHECK(send_retrying(fake_send, &fs, "x", 1, 0) == -1 && errno == ENOBUFS);
    CHECK(fs.calls == VERDICT_RETRIES + 1); /* bounded: it gives up */
    fs = (struct fake_sender){.fail = 0};
    CHECK(send_retrying(fake_send, &fs, "x", 1, 0) == 0 && fs.calls == 1);

    if (failures) {
        fprintf(stderr, "self-test: %d check(s) failed\n", failures);
        return 1;
    }
    printf("self-test: ok\n");
    return 0;
}

/* Print a table normalised (sorted by key) so its parse can be checked. */
static int check_table(const char *path)
{
    char err[512];
    struct table t = {0};
    if (table_load(path, &t, err, sizeof err)) {
        fprintf(stderr, "delayd: error: %s\n", err);
        return 2;
    }
    for (size_t i = 0; i <= t.mask; i++) {
        if (!t.slots[i].used)
            continue;
        struct pair *p = &t.slots[i];
        struct in_addr s = {.s_addr = (uint32_t)(p->key >> 32)}, d = {.s_addr = (uint32_t)p->key};
        char sb[INET_ADDRSTRLEN], db[INET_ADDRSTRLEN];
        printf("%s %s %u %u %u\n", inet_ntop(AF_INET, &s, sb, sizeof sb),
               inet_ntop(AF_INET, &d, db, sizeof db), p->delay_us, p->jitter_us, p->loss_ppm);
    }
    table_free(&t);
    return 0;
}

/* ------------------------------------------------------------------ main */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: delayd --table FILE [--queue-first N] [--queue-count N] [--rt-priority P]\n"
            "              [--max-held N] [--max-held-bytes N] [--pidfile FILE]\n"
            "       delayd --check --table FILE | --self-test\n"
            "Holds NFQUEUE packets for the one-way delay of their (src, dst) pair.\n"
            "FILE lines: src_ip dst_ip delay_us jitter_us loss_ppm  (# comments)\n");
}

static int parse_opt_u32(const char *name, const char *s, uint32_t max, uint32_t *out)
{
    if (parse_u32(s, max, out) == 0)
        return 0;
    fprintf(stderr, "delayd: error: --%s must be an integer 0..%u, got '%s'\n", name, max, s);
    return -1;
}

static void print_counters(struct worker *ws, unsigned count, const char *when)
{
    unsigned long long d = 0, p = 0, l = 0, o = 0, e = 0, x = 0, bo = 0, vr = 0, vf = 0, pk = 0;
    for (unsigned i = 0; i < count; i++) {
        d += atomic_load(&ws[i].c.delayed);
        p += atomic_load(&ws[i].c.passed);
        l += atomic_load(&ws[i].c.lost);
        o += atomic_load(&ws[i].c.overflow);
        e += atomic_load(&ws[i].c.enobufs);
        x += atomic_load(&ws[i].c.errors);
        bo += atomic_load(&ws[i].c.byte_overflow);
        vr += atomic_load(&ws[i].c.verdict_retries);
        vf += atomic_load(&ws[i].c.verdict_failed);
        unsigned long long peak = atomic_load(&ws[i].c.packet_bytes_peak);
        pk = peak > pk ? peak : pk;
    }
    fprintf(stderr,
            "delayd: %s delayed=%llu passed=%llu lost=%llu overflow=%llu enobufs=%llu errors=%llu "
            "byte_overflow=%llu held_bytes=%llu held_bytes_peak=%llu packet_bytes_peak=%llu "
            "verdict_retries=%llu verdict_failed=%llu\n",
            when, d, p, l, o, e, x, bo, atomic_load(&held_bytes.held),
            atomic_load(&held_bytes.peak), pk, vr, vf);
}

int main(int argc, char **argv)
{
    uint32_t first = 0, count = 1, rt_priority = 50, max_held = 200000;
    uint32_t max_held_bytes = 256u << 20, fail = 0;
    const char *pidfile = NULL;
    bool check = false;
    static const struct option opts[] = {
        {"table", required_argument, 0, 't'},       {"queue-first", required_argument, 0, 'f'},
        {"queue-count", required_argument, 0, 'c'}, {"rt-priority", required_argument, 0, 'r'},
        {"max-held", required_argument, 0, 'm'},    {"pidfile", required_argument, 0, 'p'},
        {"max-held-bytes", required_argument, 0, 'b'}, {"fail-sends", required_argument, 0, 'F'},
        {"check", no_argument, 0, 'k'},             {"self-test", no_argument, 0, 's'},
        {"help", no_argument, 0, 'h'},              {0, 0, 0, 0},
    };
    int o;
    while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (o) {
        case 't': table_path = optarg; break;
        case 'f': if (parse_opt_u32("queue-first", optarg, 65535, &first)) return 2; break;
        case 'c': if (parse_opt_u32("queue-count", optarg, 64, &count)) return 2; break;
        case 'r': if (parse_opt_u32("rt-priority", optarg, 99, &rt_priority)) return 2; break;
        case 'm': if (parse_opt_u32("max-held", optarg, 10000000, &max_held)) return 2; break;
        case 'b': if (parse_opt_u32("max-held-bytes", optarg, UINT32_MAX, &max_held_bytes)) return 2; break;
        case 'F': if (parse_opt_u32("fail-sends", optarg, 1000000, &fail)) return 2; break;
        case 'p': pidfile = optarg; break;
        case 'k': check = true; break;
        case 's': return self_test();
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind < argc || !table_path) {
        fprintf(stderr, "delayd: error: %s\n",
                table_path ? "unexpected argument: see --help" : "--table FILE is required");
        return 2;
    }
    if (check)
        return check_table(table_path);
    if (count < 1 || first + count - 1 > 65535 || max_held < 1) {
        fprintf(stderr, "delayd: error: --queue-count and --max-held must be at least 1, "
                        "and queues must stay below 65536\n");
        return 2;
    }
    if (max_held_bytes < 65536) {
        fprintf(stderr, "delayd: error: --max-held-bytes must be at least 65536 "
                        "(one GSO packet), got %u\n", max_held_bytes);
        return 2;
    }
    held_bytes.limit = max_held_bytes;
    atomic_store(&fail_sends, fail);

    char err[512];
    if (table_load(table_path, &shared_table, err, sizeof err)) {
        fprintf(stderr, "delayd: error: %s\n", err);
        return 2;
    }
    atomic_store(&table_gen, 1);

    /* Signals go to the main thread only: block them before threads exist. */
    sigset_t sigs;
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGHUP);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);

    struct worker *ws = calloc(count, sizeof *ws);
    if (!ws)
        return 1;
    for (unsigned i = 0; i < count; i++) {
        ws[i].queue = (uint16_t)(first + i);
        if (open_queue(&ws[i], max_held))
            return 1;
    }
    bool warned = false;
    for (unsigned i = 0; i < count; i++) {
        if (pthread_create(&ws[i].thread, NULL, worker_main, &ws[i])) {
            fprintf(stderr, "delayd: error: cannot start a thread\n");
            return 1;
        }
        if (rt_priority) {
            struct sched_param sp = {.sched_priority = (int)rt_priority};
            int rc = pthread_setschedparam(ws[i].thread, SCHED_FIFO, &sp);
            if (rc && !warned) {
                fprintf(stderr, "delayd: warning: no SCHED_FIFO (%s): delays may be less exact\n",
                        strerror(rc));
                warned = true;
            }
        }
    }
    if (pidfile) {
        FILE *f = fopen(pidfile, "w");
        if (!f || fprintf(f, "%d\n", (int)getpid()) < 0 || fclose(f)) {
            fprintf(stderr, "delayd: error: cannot write pidfile %s: %s\n", pidfile,
                    strerror(errno));
            return 1;
        }
    }
    pthread_mutex_lock(&shared_lock);
    size_t npairs = shared_table.n;
    pthread_mutex_unlock(&shared_lock);
    fprintf(stderr, "delayd: ready queues=%u-%u pairs=%zu\n", first, first + count - 1, npairs);

    for (;;) {
        int sig;
        if (sigwait(&sigs, &sig))
            continue;
        if (sig == SIGUSR1) {
            print_counters(ws, count, "counters");
        } else if (sig == SIGHUP) {
            struct table t = {0};
            if (table_load(table_path, &t, err, sizeof err)) {
                fprintf(stderr, "delayd: warning: reload failed, old table kept: %s\n", err);
                continue;
            }
            pthread_mutex_lock(&shared_lock);
            table_free(&shared_table);
            shared_table = t;
            atomic_fetch_add(&table_gen, 1);
            pthread_mutex_unlock(&shared_lock);
            for (unsigned i = 0; i < count; i++)
                if (write(ws[i].wake_fd, &(uint64_t){1}, 8) < 0)
                    atomic_fetch_add(&ws[i].c.errors, 1);
            fprintf(stderr, "delayd: reloaded pairs=%zu\n", t.n);
        } else {
            break;
        }
    }
    atomic_store(&stopping, true);
    for (unsigned i = 0; i < count; i++)
        if (write(ws[i].wake_fd, &(uint64_t){1}, 8) < 0)
            atomic_fetch_add(&ws[i].c.errors, 1);
    for (unsigned i = 0; i < count; i++)
        pthread_join(ws[i].thread, NULL);
    print_counters(ws, count, "exit");
    for (unsigned i = 0; i < count; i++) {
        mnl_socket_close(ws[i].nl);
        mnl_nlmsg_batch_stop(ws[i].batch);
        close(ws[i].wake_fd);
        table_free(&ws[i].table);
        free(ws[i].heap.v);
        free(ws[i].vbuf);
        free(ws[i].rbuf);
    }
    free(ws);
    table_free(&shared_table);
    if (pidfile)
        unlink(pidfile);
    return 0;
}
