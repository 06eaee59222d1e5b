// Node in the sandbox: the fs module in the working folder, a child process, a worker thread
// and a timer.
const fs = require("fs");
const { execFileSync } = require("child_process");
const { Worker } = require("worker_threads");

fs.writeFileSync("node-out.txt", "written by node\n");
console.log("read:", fs.readFileSync("node-out.txt", "utf8").trim());
console.log("child:", execFileSync("/usr/bin/bash", ["-c", "echo $((6 * 7))"]).toString().trim());
const w = new Worker("const { parentPort } = require('worker_threads'); parentPort.postMessage(21 * 2);", { eval: true });
w.on("message", (m) => {
	console.log("worker:", m);
	setTimeout(() => console.log("timer: done"), 10);
});
