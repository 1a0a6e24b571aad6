// The example's service worker: every file of the page's origin (the page, the package's
// JavaScript and memloop.wasm) fetched fresh when the network answers and kept, else answered
// from what was kept, so the page loads offline. The model's files are not kept here: memloop
// caches them in OPFS, sha256-checked.
const CACHE = 'memloop-example-v1'
const WAIT_MS = 5000

self.addEventListener('install', () => self.skipWaiting())
self.addEventListener('activate', (e) => e.waitUntil(self.clients.claim()))

self.addEventListener('fetch', (e) => {
  const url = new URL(e.request.url)
  if (e.request.method !== 'GET' || url.origin !== self.location.origin || url.pathname.includes('/model/')) return
  e.respondWith((async () => {
    const cache = await caches.open(CACHE)
    const cached = await cache.match(e.request)
    try {
      // With a cached copy, a network that stalls (connected, answering nothing) gets WAIT_MS.
      const fresh = await fetch(e.request, cached ? { signal: AbortSignal.timeout(WAIT_MS) } : {})
      // A copy that cannot be kept (the origin's quota, which follows the disk's free space)
      // still answers: the page works online, only not offline.
      if (fresh.ok) await cache.put(e.request, fresh.clone()).catch(() => {})
      return fresh
    } catch (err) {
      if (cached) return cached
      throw err
    }
  })())
})
