// Stops npm ci / npm start / npm test at once on a Node.js older than package.json's "engines".
/* eslint-disable @typescript-eslint/no-require-imports -- it must run on any Node, before anything is installed */
// Plain CommonJS with nothing newer than ES5 syntax, so that any old Node can run it to the end.
'use strict';
var fs = require('fs');
var path = require('path');

var wanted = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8')).engines.node;
var min = /(\d+)(?:\.(\d+))?(?:\.(\d+))?/.exec(wanted);
var have = process.versions.node.split('.').map(Number);
var need = [Number(min[1]), Number(min[2] || 0), Number(min[3] || 0)];

function older(a, b) {
  for (var i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i] < b[i];
  return false;
}

if (older(have, need)) {
  process.stderr.write(
    'Skyferry needs Node.js ' +
      need.join('.') +
      ' or newer (this is ' +
      process.versions.node +
      '): ' +
      'install Node 24 LTS from https://nodejs.org/ or with `nvm install 24`, then run the command again.\n',
  );
  process.exit(1);
}
