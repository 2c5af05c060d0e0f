// PLACEHOLDER owned by helper C1: replace this file entirely.
import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.js';

export function registerSignInPages(_scope: FastifyInstance, _services: Services): void {}
